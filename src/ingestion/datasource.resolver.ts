import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { busIterator } from '../events/stream.ts';
import type { Context } from '../graphql/context.ts';
import { Connection, PageArgs } from '../graphql/pagination.ts';
import { badInput } from '../errors.ts';
import { Datasource, DatasourceStatus, DatasourceType } from './datasource.entity.ts';
import { CreateDatasourceInput, DatasourceStatusChange, UpdateDatasourceInput, UpdateDocumentInput, UploadLink, UploadLinkInput } from './datasource.inputs.ts';
import { DATASOURCE_STATUS, type StatusChange } from './datasource.service.ts';

@ObjectType()
class DatasourceConnection extends Connection(Datasource) {}

@ArgsType()
class DatasourcesArgs extends PageArgs {
  @Field(() => ID)
  datastoreId!: string;

  @Field(() => DatasourceStatus, { nullable: true })
  status?: DatasourceStatus;

  @Field(() => DatasourceType, { nullable: true })
  type?: DatasourceType;
}

@Resolver(() => Datasource)
export class DatasourceResolver {
  @Query(() => DatasourceConnection, { description: "A datastore's datasources, newest first." })
  datasources(@Args() args: DatasourcesArgs, @Ctx() ctx: Context): Promise<DatasourceConnection> {
    return ctx.services.datasources.list(ctx.em, ctx.auth, args);
  }

  @Query(() => Datasource)
  datasource(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Datasource> {
    return ctx.services.datasources.get(ctx.em, ctx.auth, id);
  }

  @Mutation(() => Datasource, { description: 'A web page, a web site or a text document; processing is queued (status unsynched).' })
  createDatasource(@Arg('input') input: CreateDatasourceInput, @Ctx() ctx: Context): Promise<Datasource> {
    const { datasources } = ctx.services;
    if (input.type === DatasourceType.text) {
      return datasources.createText(ctx.em, ctx.auth, { ...input, name: input.name ?? 'Untitled', text: input.text ?? '' });
    }
    if (input.type === DatasourceType.file) {
      throw badInput('Files are uploaded with createUploadLink (then processUpload) or the REST upload paths.', { field: 'type' });
    }
    return datasources.createWeb(ctx.em, ctx.auth, { ...input, config: input.config ?? {} });
  }

  @Mutation(() => UploadLink, { description: 'Creates a file datasource and a pre-signed upload link. No credentials needed for a public datastore.' })
  async createUploadLink(@Arg('datastoreId', () => ID) datastoreId: string, @Arg('input') input: UploadLinkInput, @Ctx() ctx: Context): Promise<UploadLink> {
    const { datasource, link, expiresAt, headers } = await ctx.services.datasources.createUploadLink(ctx.em, ctx.auth, datastoreId, input, ctx.origin);
    return { id: datasource.id, link, expiresAt, headers, datasource };
  }

  @Mutation(() => Datasource, { description: 'Queues processing of a file uploaded through its link.' })
  processUpload(@Arg('datastoreId', () => ID) datastoreId: string, @Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Datasource> {
    return ctx.services.datasources.processUpload(ctx.em, ctx.auth, datastoreId, id);
  }

  @Mutation(() => Datasource, { description: "Replaces a document's text and metadata and re-embeds it. No credentials needed for a public datastore." })
  updateDocument(@Arg('datastoreId', () => ID) datastoreId: string, @Arg('input') input: UpdateDocumentInput, @Ctx() ctx: Context): Promise<Datasource> {
    return ctx.services.datasources.updateText(ctx.em, ctx.auth, datastoreId, input, ctx.origin);
  }

  @Mutation(() => Datasource, { description: 'Renames a datasource or changes the re-sync schedule of a web page or site.' })
  updateDatasource(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateDatasourceInput, @Ctx() ctx: Context): Promise<Datasource> {
    return ctx.services.datasources.update(ctx.em, ctx.auth, id, input);
  }

  @Mutation(() => Datasource, { description: 'Processes the datasource again (status pending); a site is crawled again.' })
  resyncDatasource(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Datasource> {
    return ctx.services.datasources.resync(ctx.em, ctx.auth, id);
  }

  @Mutation(() => Datasource, { description: 'Removes the datasource, its chunks and its file (and the pages of a site).' })
  deleteDatasource(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Datasource> {
    return ctx.services.datasources.delete(ctx.em, ctx.auth, id);
  }

  @Subscription(() => DatasourceStatusChange, {
    description: "Every state change of a datastore's datasources, from any process.",
    subscribe: async ({ args, context }) => {
      const ctx = context as Context;
      const datastore = await ctx.services.datasources.readableDatastore(ctx.em, ctx.auth, args.datastoreId as string);
      return busIterator<StatusChange>(ctx.services.bus, DATASOURCE_STATUS, (e) => e.datastoreId === datastore.id);
    },
  })
  datasourceStatusChanged(@Root() change: StatusChange, @Arg('datastoreId', () => ID) _datastoreId: string): DatasourceStatusChange {
    return { ...change, at: new Date(change.at) };
  }

  @FieldResolver(() => ID)
  datastoreId(@Root() ds: Datasource): string {
    return ds.datastore.id;
  }
}
