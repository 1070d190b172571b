import type { Orm } from './types.ts';

/**
 * pgvector settings of every connection of the service (the datastore query is the only user of
 * the HNSW index). Set once per connection, so a search is one statement, not a transaction of
 * SET LOCALs around it.
 *  - ef_search: what the planner costs an HNSW scan with. pgvector's estimate grows with it, and
 *    at 400 it priced the index above an exact scan of every chunk below ~40,000
 *    chunks, so small datastores were searched exactly (10,000 chunks: ~10x slower, the vectors
 *    being read from TOAST one by one). The search itself runs with HNSW_EF_SEARCH, which the
 *    statement sets for its own scan (retrieval.service.ts, searchSql).
 *  - iterative_scan = relaxed_order: a filtered search goes on scanning the index until enough
 *    rows pass its filters (the statement sorts the candidates by distance again);
 *  - max_scan_tuples: where such a scan gives up; past it, the planner's exact plan over the
 *    filter's own index is the cheaper one anyway.
 *  - jit = off: the search statement plans an exact branch beside the index scan (searchSql), and
 *    on a large table that branch's estimate (a sort of every chunk) crosses jit_above_cost even
 *    when it does not run: PostgreSQL then compiled the statement first, 47 ms of a 55 ms query at
 *    250,000 chunks (8.6 ms without). No statement of the service gains from JIT: they read few rows.
 *  - plan_cache_mode = force_custom_plan: the search is a prepared statement (rawQuery's
 *    `prepared`) whose one text serves every filter; each run is still planned for its own
 *    parameters (which datastores, filters, bound), as when it was sent unprepared, instead of
 *    PostgreSQL settling on one generic plan for them all after five runs. What preparing saves
 *    is the parsing and analysis. Only prepared statements read this setting.
 */
export const VECTOR_SEARCH_SETTINGS: Readonly<Record<string, string>> = {
  'hnsw.ef_search': '40',
  'hnsw.iterative_scan': 'relaxed_order',
  'hnsw.max_scan_tuples': '20000',
  jit: 'off',
  plan_cache_mode: 'force_custom_plan',
};

/**
 * The size of the candidate list an HNSW scan of the datastore query keeps, above
 * SMALL_INDEX_CHUNKS. Recall@10 against exact search (bench:query, PostgreSQL 17): the clustered
 * corpus at 50,000 chunks 0.90 at 200, 0.98 at 400; issue 19's files corpus (the endpoint
 * stand-in's vectors, harder for the graph) 0.94 at 400 and 500, 0.95 at 600 at 50,000 chunks, and
 * 0.94 at 400, 0.96 at 600 at 250,000. 600 costs 2-5 ms more an unfiltered search there. The
 * search asks the index for at most 400 candidates (retrieval.service.ts), which this also covers.
 */
export const HNSW_EF_SEARCH = 600;

/**
 * An index of at most this many chunks is scanned with SMALL_INDEX_EF_SEARCH: in a small graph a
 * long list visits most of the graph, and recall@10 is already >= 0.95 with 200 (0.98 on issue
 * 19's 10,000-chunk corpus, 0.99 on 20,000 clustered chunks: bench:query's sweep, docs/benchmarks.md).
 */
export const SMALL_INDEX_CHUNKS = 20_000;
export const SMALL_INDEX_EF_SEARCH = 200;

/**
 * Up to how many chunks a search keeps (its datastores and filters) are all compared instead of
 * scanning an index of `indexed` chunks: sqrt(400 x indexed), 0 when the index's size is unknown.
 * An exact comparison costs about 3 us a chunk, read through the filter's btree; an HNSW scan about
 * 5-8 ms unfiltered, and more as the filter keeps a smaller share of the index (the scan goes on
 * until enough rows pass it), with a lower recall. Measured (bench:query's corpora, PostgreSQL 17,
 * quiet machine): a filter keeping 1,000 of 10,000 chunks, 2.6 ms exact against 7.6 ms through the
 * index; 8,237 of 250,000, 24.8 ms (recall 1.00) against 33.6 ms (recall 0.92). The bound grows with
 * the index: 2,000 chunks of 10,000, 4,472 of 50,000, 10,000 of 250,000; a datastore alone in its
 * index is searched through it from 400 chunks.
 */
export function exactBound(indexed: number | undefined): number {
  return indexed === undefined ? 0 : Math.floor(Math.sqrt(400 * indexed));
}

/** The ef_search of a scan of an index holding `chunks` chunks (unknown: the larger list). */
export function efSearchFor(chunks: number | undefined): number {
  return chunks !== undefined && chunks <= SMALL_INDEX_CHUNKS ? SMALL_INDEX_EF_SEARCH : HNSW_EF_SEARCH;
}

/** How a search scans an index holding `indexed` chunks (unknown: as if large): searchSql's efSearch and exactUpTo. */
export function scanFor(indexed: number | undefined): { efSearch: number; exactUpTo: number } {
  return { efSearch: efSearchFor(indexed), exactUpTo: exactBound(indexed) };
}

/** One statement that applies VECTOR_SEARCH_SETTINGS to the session. */
export function vectorSessionSql(): string {
  return `select ${Object.entries(VECTOR_SEARCH_SETTINGS).map(([k, v]) => `set_config('${k}', '${v}', false)`).join(', ')}`;
}

/**
 * How each dimension's HNSW index is built (pgvector's defaults: m = 16, ef_construction = 64).
 * Inserting a chunk into the index is most of its insert's cost, in PGlite's WebAssembly above
 * all, and scales with both; recall@10 at 50,000 chunks stays >= 0.95 with HNSW_EF_SEARCH
 * (bench:query, docs/benchmarks.md). Migration20261129000400ChunkInsertCost rebuilt the indexes
 * that existed then with these values.
 */
export const HNSW_BUILD = 'with (m = 12, ef_construction = 40)';

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
      `create index if not exists chunks_embedding_${dimension}_hnsw on chunks using hnsw ((embedding::vector(${dimension})) vector_cosine_ops) ${HNSW_BUILD} where dimension = ${dimension}`,
    );
}
