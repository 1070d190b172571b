import type { Orm } from './orm.ts';

/** pgvector's HNSW index takes vectors of at most 2,000 dimensions. */
const HNSW_MAX_DIMENSIONS = 2000;

/**
 * Chunks of every dimension share one untyped column; each dimension in use needs its own
 * partial HNSW index, and queries must use the same expression to hit it.
 */
export async function ensureVectorIndex(orm: Orm, dimension: number): Promise<void> {
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > HNSW_MAX_DIMENSIONS) return;
  await orm.em
    .getConnection()
    .execute(
      `create index if not exists chunks_embedding_${dimension}_hnsw on chunks using hnsw ((embedding::vector(${dimension})) vector_cosine_ops) where dimension = ${dimension}`,
    );
}
