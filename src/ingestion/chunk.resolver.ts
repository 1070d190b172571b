import { Args, ArgsType, Ctx, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { Connection, PageArgs } from '../graphql/pagination.ts';
import { chunkPage } from './chunk.pages.ts';

@ObjectType('Chunk', { description: 'A fragment of a document, as it is stored and searched.' })
export class ChunkView {
  @Field(() => ID, { description: 'Also the cursor: pass it as `after` for the chunks that follow.' })
  id!: string;

  @Field()
  text!: string;

  @Field(() => Int, { description: 'Its index in the document, from 0.' })
  position!: number;

  @Field(() => Int, { nullable: true, description: 'The page of the file it comes from (PDF and other paged files); null otherwise.' })
  page!: number | null;

  @Field(() => Int, { description: 'Estimated tokens (about 4 characters each), as the stored-token limit counts them.' })
  tokenCount!: number;

  @Field(() => String, { nullable: true, description: 'The headings it sits under ("Chapter > Section"), when the document has headings.' })
  section!: string | null;
}

@ObjectType()
class ChunkConnection extends Connection(ChunkView) {}

@ArgsType()
class ChunksArgs extends PageArgs {
  @Field(() => ID)
  datasourceId!: string;
}

@Resolver()
export class ChunkResolver {
  @Query(() => ChunkConnection, { description: "A datasource's chunks in document order (position), for its organization only: a public datastore is searched by others, not read out whole." })
  chunks(@Args() args: ChunksArgs, @Ctx() ctx: Context): Promise<ChunkConnection> {
    return chunkPage(ctx.em, ctx.services.datasources, ctx.auth, args);
  }
}
