import { Arg, Args, Ctx, Field, Float, ID, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { Connection, PageArgs } from '../graphql/pagination.ts';
import { Datastore } from './datastore.entity.ts';
import { CreateDatastoreInput, UpdateDatastoreInput } from './datastore.inputs.ts';
import { busIterator } from '../events/stream.ts';
import { DATASTORE_EMBEDDING, type DatastoreEmbeddingEvent } from './model-change.ts';

@ObjectType()
class DatastoreConnection extends Connection(Datastore) {}

@ObjectType({ description: "A datastore's embedding model: a change started, progressed, completed, failed or was cancelled (the fields as on Datastore)." })
class DatastoreEmbeddingChange {
  @Field(() => ID)
  datastoreId!: string;

  @Field()
  embeddingModel!: string;

  @Field(() => Int)
  embeddingDimension!: number;

  @Field(() => String, { nullable: true })
  pendingEmbeddingModel!: string | null;

  @Field(() => Int, { nullable: true })
  pendingEmbeddingDimension!: number | null;

  @Field(() => Float, { nullable: true })
  reembedProgress!: number | null;

  @Field(() => String, { nullable: true })
  reembedError!: string | null;

  @Field()
  at!: Date;
}

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

  @Subscription(() => DatastoreEmbeddingChange, {
    description: "Progress of a change of the datastore's embedding model, from any process: each batch of re-embedded chunks, the switch, a failure.",
    subscribe: async ({ args, context }) => {
      const ctx = context as Context;
      const datastore = await ctx.services.datastores.get(ctx.em, ctx.auth, args.datastoreId as string);
      return busIterator<DatastoreEmbeddingEvent>(ctx.services.bus, DATASTORE_EMBEDDING, (e) => e.datastoreId === datastore.id);
    },
  })
  datastoreEmbeddingChanged(@Root() change: DatastoreEmbeddingEvent, @Arg('datastoreId', () => ID) _datastoreId: string): DatastoreEmbeddingChange {
    return { ...change, at: new Date(change.at) };
  }

  @Mutation(() => Datastore, { description: 'Returns the deleted datastore.' })
  deleteDatastore(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Datastore> {
    return ctx.services.datastores.delete(ctx.em, ctx.auth, id);
  }
}
