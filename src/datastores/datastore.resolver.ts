import { Arg, Args, Ctx, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { Connection, PageArgs } from '../graphql/pagination.ts';
import { Datastore } from './datastore.entity.ts';
import { CreateDatastoreInput, UpdateDatastoreInput } from './datastore.inputs.ts';

@ObjectType()
class DatastoreConnection extends Connection(Datastore) {}

@Resolver(() => Datastore)
export class DatastoreResolver {
  @Query(() => Datastore, { description: 'Public datastores are readable without credentials.' })
  datastore(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Datastore> {
    return ctx.services.datastores.get(ctx.em, ctx.auth, id);
  }

  @Query(() => DatastoreConnection, { description: "The caller's organization's datastores, newest first." })
  datastores(@Args() { first, after }: PageArgs, @Ctx() ctx: Context): Promise<DatastoreConnection> {
    return ctx.services.datastores.list(ctx.em, ctx.auth, first, after);
  }

  @Mutation(() => Datastore)
  createDatastore(@Arg('input') input: CreateDatastoreInput, @Ctx() ctx: Context): Promise<Datastore> {
    return ctx.services.datastores.create(ctx.em, ctx.auth, input);
  }

  @Mutation(() => Datastore)
  updateDatastore(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateDatastoreInput, @Ctx() ctx: Context): Promise<Datastore> {
    return ctx.services.datastores.update(ctx.em, ctx.auth, id, input);
  }

  @Mutation(() => Datastore, { description: 'Returns the deleted datastore.' })
  deleteDatastore(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Datastore> {
    return ctx.services.datastores.delete(ctx.em, ctx.auth, id);
  }
}
