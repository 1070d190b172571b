import { Arg, Args, Ctx, Field, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { Connection, PageArgs } from '../graphql/pagination.ts';
import { Datasource } from './datasource.entity.ts';

@ObjectType({ description: 'A datasource that failed or is stuck, and why.' })
export class DatasourceProblem {
  @Field(() => ID, { description: "The datasource's id." })
  id!: string;

  @Field(() => Datasource)
  datasource!: Datasource;

  @Field({ description: 'Its error message, or what became of its job when it is stuck.' })
  reason!: string;

  @Field({ description: 'Still in progress by its status, but no job is left that would finish it (it is failed with this reason within STALLED_SWEEP_SECONDS).' })
  stuck!: boolean;
}

@ObjectType()
class DatasourceProblemConnection extends Connection(DatasourceProblem) {}

@Resolver()
export class DatasourceProblemResolver {
  @Query(() => DatasourceProblemConnection, { description: "The organization's datasources that failed (error, usage_limit_reached) or are stuck, newest first, with the reason." })
  datasourceProblems(@Args() args: PageArgs, @Ctx() ctx: Context): Promise<DatasourceProblemConnection> {
    return ctx.services.problems.list(ctx.em, ctx.auth, args);
  }

  @Mutation(() => [Datasource], { description: 'Processes the given datasources again (status pending), or every one listed by datasourceProblems when ids is left out (500 at most).' })
  retryDatasources(@Arg('ids', () => [ID], { nullable: true }) ids: string[] | undefined, @Ctx() ctx: Context): Promise<Datasource[]> {
    return ctx.services.problems.retry(ctx.em, ctx.auth, ids);
  }
}
