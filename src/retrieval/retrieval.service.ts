/**
 * Hybrid retrieval: pgvector (HNSW, cosine) and PostgreSQL full-text search, fused by
 * reciprocal rank. Filters run inside both SQL searches; pgvector's iterative index scan keeps
 * scanning until enough rows pass them, so a filtered query still returns topK rows whenever
 * that many match (settings: VECTOR_SEARCH_SETTINGS in db/vector-index.ts).
 */
import { isOutsider } from '../access.ts';
import type { Auth } from '../auth/auth.ts';
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { vectorLiteral } from '../db/vector.type.ts';
import { Datastore } from '../datastores/datastore.entity.ts';
import { badInput } from '../errors.ts';
import { isId } from '../ids.ts';
import type { Embedder } from '../providers/embeddings.ts';
import type { DatastoreService } from '../datastores/datastore.service.ts';
import type { Limits } from '../limits/limits.ts';

export interface Fragment {
  text: string;
  /** Fused rank score in (0, 1]: 1 = ranked first by both the vector and the text search. */
  score: number;
  source: string;
  datasource_id: string;
  datasource_name: string;
  page: number | null;
  custom_id: string | null;
}

export interface SearchFilters {
  custom_ids?: string[] | null;
  datasource_ids?: string[] | null;
}

export interface SearchInput {
  query: string;
  topK?: number | null;
  filters?: SearchFilters | null;
}

export const TOP_K_DEFAULT = 5;
export const TOP_K_MAX = 100;
/** The usual constant of reciprocal rank fusion: damps the weight of the very first ranks. */
const RRF_K = 60;

export class RetrievalService {
  constructor(
    private readonly embedder: Embedder,
    private readonly datastores: DatastoreService,
    private readonly limits: Limits,
  ) {}

  /**
   * A datastore query (public datastores: anyone; `origin` as in getForQuery). Outsiders (anonymous
   * callers and other organizations) spend their address's budget, as anonymous questions do: each
   * query costs an embedding. Throws NOT_FOUND, FORBIDDEN, RATE_LIMITED, BAD_USER_INPUT.
   */
  async query(em: Em, auth: Auth, ip: string, datastoreId: string, input: SearchInput, origin?: string): Promise<Fragment[]> {
    const datastore = await this.datastores.getForQuery(em, auth, datastoreId, origin);
    if (isOutsider(auth, datastore)) await this.limits.admitVisitor(em, { scope: null, visitorId: null, ip, what: 'datastore queries' });
    return this.search(em, [datastore], input);
  }

  /** Searches datastores the caller was already allowed to use. Throws BAD_USER_INPUT. */
  async search(em: Em, datastores: Datastore[], input: SearchInput, signal?: AbortSignal): Promise<Fragment[]> {
    const topK = input.topK ?? TOP_K_DEFAULT;
    if (!Number.isInteger(topK) || topK < 1 || topK > TOP_K_MAX) {
      throw badInput(`topK must be a whole number from 1 to ${TOP_K_MAX}.`, { field: 'topK' });
    }
    const query = input.query?.trim();
    if (!query) throw badInput('query must not be empty.', { field: 'query' });
    if (query.length > 10_000) throw badInput('query must be at most 10,000 characters.', { field: 'query' });
    const filters = checkFilters(input.filters);
    const usable = datastores.filter((d) => d.embeddingDimension === this.embedder.dimension);
    if (!usable.length) return [];
    const vector = await this.embedder.embedQuery(query, signal);
    return this.searchByVector(em, usable.map((d) => d.id), query, vector, topK, filters);
  }

  /** The SQL of a search, with the query vector given (benchmarks time embedding apart). One statement. */
  async searchByVector(em: Em, datastoreIds: string[], query: string, vector: number[], topK: number, filters: SearchFilters = {}): Promise<Fragment[]> {
    const { sql, params } = searchSql(datastoreIds, query, vector, topK, filters);
    const rows = await rawQuery<Fragment & { score: string | number }>(em, sql, params);
    return rows.map((r) => ({ ...r, score: Number(r.score) }));
  }
}

/**
 * Pure: the statement and its parameters. It relies on the pgvector settings every connection
 * of the service has (VECTOR_SEARCH_SETTINGS in db/vector-index.ts: ef_search, iterative scan).
 *
 * The query vector is the parameter itself in the ORDER BY (`<=> $1::vector(N)`), never a column
 * of a CTE: a CTE read twice is materialized, and an ORDER BY over its column cannot use the HNSW
 * index (the search becomes an exact scan of every chunk). The vector search comes first and
 * uses $1-$5 only, so it can be run alone (benchmarks measure its recall against exact search).
 */
export function searchSql(datastoreIds: string[], query: string, vector: number[], topK: number, filters: SearchFilters = {}) {
  const dim = vector.length;
  // Candidates per search: enough for the fusion to matter, bounded for speed.
  const candidates = Math.min(Math.max(topK * 4, 50), 400);
  const filter = `c.datastore_id = any($2::uuid[])
      and ($3::uuid[] is null or c.datasource_id = any($3::uuid[]))
      and ($4::text[] is null or c.custom_id = any($4::text[]))`;
  const sql = `
    with vec as (
      select id, row_number() over (order by d, id) as r
      from (
        select c.id, c.embedding::vector(${dim}) <=> $1::vector(${dim}) as d
        from chunks c
        where c.dimension = ${dim} and ${filter}
        order by c.embedding::vector(${dim}) <=> $1::vector(${dim})
        limit $5
      ) nearest
    ),
    fts as (
      select c.id, row_number() over (order by ts_rank_cd(c.tsv, q.tq) desc, c.id) as r
      from chunks c,
           (select to_tsquery('english', replace(plainto_tsquery('english', $6)::text, ' & ', ' | ')) as tq) q
      where c.tsv @@ q.tq and ${filter}
      order by ts_rank_cd(c.tsv, q.tq) desc, c.id
      limit $5
    ),
    fused as (
      select coalesce(vec.id, fts.id) as id,
             (coalesce(1.0 / (${RRF_K} + vec.r), 0) + coalesce(1.0 / (${RRF_K} + fts.r), 0)) / (2.0 / (${RRF_K} + 1)) as score,
             coalesce(vec.r, 1000000) as vr
      from vec full outer join fts on fts.id = vec.id
    )
    select c.text, round(f.score::numeric, 6) as score,
           coalesce(c.metadata->>'source', d.name) as source,
           c.datasource_id, d.name as datasource_name, c.page, c.custom_id
    from fused f
    join chunks c on c.id = f.id
    join datasources d on d.id = c.datasource_id
    order by f.score desc, f.vr asc
    limit $7`;
  const params = [
    vectorLiteral(vector),
    datastoreIds,
    filters.datasource_ids?.length ? filters.datasource_ids : null,
    filters.custom_ids?.length ? filters.custom_ids : null,
    candidates,
    query,
    topK,
  ];
  return { sql, params };
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

function checkFilters(filters: SearchFilters | null | undefined): SearchFilters {
  if (!filters) return {};
  const list = (v: unknown, field: string): string[] | null => {
    if (v == null) return null;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      throw badInput(`filters.${field} must be an array of strings.`, { field: `filters.${field}` });
    }
    if (v.length > 1000) throw badInput(`filters.${field} takes at most 1,000 values.`, { field: `filters.${field}` });
    return v as string[];
  };
  const ids = list(filters.datasource_ids, 'datasource_ids');
  // Malformed ids cannot match anything; a list of only those must match nothing, not everything.
  const validIds = ids?.filter(isId);
  return {
    datasource_ids: ids && ids.length ? (validIds!.length ? validIds! : [NIL_UUID]) : null,
    custom_ids: list(filters.custom_ids, 'custom_ids'),
  };
}
