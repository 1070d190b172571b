/**
 * Hybrid retrieval: pgvector (HNSW, cosine) and PostgreSQL full-text search each propose
 * candidates; the union is ranked by one relevance in [0, 1] (Fragment.score), which a caller can
 * cut with minScore and compare across queries (docs/evaluation.md: how it was chosen). Filters run inside both SQL searches; pgvector's iterative index scan keeps
 * scanning until enough rows pass them, so a filtered query still returns topK rows whenever
 * that many match (settings: VECTOR_SEARCH_SETTINGS in db/vector-index.ts).
 */
import { isOutsider } from '../access.ts';
import type { Auth } from '../auth/auth.ts';
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { HNSW_EF_SEARCH, scanFor } from '../db/vector-index.ts';
import { vectorLiteral } from '../db/vector.type.ts';
import { Datastore } from '../datastores/datastore.entity.ts';
import { AppError, badInput } from '../errors.ts';
import { isId } from '../ids.ts';
import { EmbeddingError, type Embedder } from '../providers/embeddings.ts';
import type { EmbedderRegistry } from '../providers/embedder-registry.ts';
import { RerankError, type Reranker } from '../providers/rerank.ts';
import type { DatastoreService } from '../datastores/datastore.service.ts';
import type { Limits } from '../limits/limits.ts';
import { WORD_WEIGHT } from '../answers/answer.inputs.ts';
import { ChunkStats } from './chunk-stats.ts';
import { QueryVectors } from './query-vectors.ts';
import { SYNONYM_WEIGHT, synonymsOf } from './synonyms.ts';

export interface Fragment {
  text: string;
  /**
   * Relevance in [0, 1], comparable across queries: (the cosine similarity of the fragment to the
   * query + 2 x the share of the query's words (stemmed, stop words left out) that the fragment
   * contains) / 3 (WORD_WEIGHT and SCORE_DESCRIPTION, answer.inputs.ts).
   */
  score: number;
  source: string;
  datasource_id: string;
  datasource_name: string;
  page: number | null;
  custom_id: string | null;
  /** The headings above the fragment in its document ("Setup > Pairing"), when it has any. */
  section: string | null;
}

export interface SearchFilters {
  custom_ids?: string[] | null;
  datasource_ids?: string[] | null;
}

export interface SearchInput {
  query: string;
  topK?: number | null;
  filters?: SearchFilters | null;
  /** Drop fragments whose score is below this (0 to 1). */
  minScore?: number | null;
}

export const TOP_K_DEFAULT = 5;
export const TOP_K_MAX = 100;
/**
 * How many chunks matching the query's words the text search ranks at most. Ranking every match
 * grows with the datastore (a common word matches thousands of chunks); the pool takes chunks
 * with more of the query's words first, so what it leaves out shares one word with the query and
 * would score at most 1/(number of words) on that half of the relevance.
 */
export const FTS_POOL = 100;

/**
 * How many of the query's words the text half reads: each is a GIN lookup and a term of the
 * ranking, so a pasted page (a query may hold 10,000 characters) took seconds to minutes of
 * database time. The vector half still reads the whole query.
 */
export const TEXT_QUERY_WORDS = 64;

/** The query as the text half reads it: its first TEXT_QUERY_WORDS words. */
function textQueryOf(query: string): string {
  const words = query.split(/\s+/).filter(Boolean);
  return words.length <= TEXT_QUERY_WORDS ? query : words.slice(0, TEXT_QUERY_WORDS).join(' ');
}
/** A lexeme (stemmed by to_tsvector) quoted for tsquery's input syntax: quotes and backslashes doubled. */
const tsqQuote = (lexeme: string) => `'''' || replace(replace(${lexeme}, '\\', '\\\\'), '''', '''''') || ''''`;
/**
 * The query's distinct lexemes; with common words ($14, see common-words.ts) those left out, so
 * that only the query's other words propose the text half's candidates.
 */
const queryWords = (withoutCommon: boolean) =>
  `(select w from unnest(tsvector_to_array(to_tsvector('english', $8))) w${withoutCommon ? ' where w <> all($14::text[])' : ''})`;
/**
 * The words two by two, OR-ed ("a & b | a & c | b & c"): chunks with at least two of them. Null
 * for fewer than two words (the tier then matches nothing). Pairs of the first 16 words at most
 * (120 pairs): a 10,000-character query would otherwise make millions.
 */
const pairsTsquery = (words: string) => {
  const first16 = `(select w from ${words} s(w) limit 16)`;
  return `(select string_agg(${tsqQuote('a.w')} || ' & ' || ${tsqQuote('b.w')}, ' | ')::tsquery
                 from ${first16} a, ${first16} b where a.w < b.w)`;
};
/** Any of the query's words (the text half's ranking, and its widest tier). */
const ANY_TSQUERY = `to_tsquery('english', replace(plainto_tsquery('english', $8)::text, ' & ', ' | '))`;
/** The text half's tiers: all of the words, two of them, any of them. Null where no word is left. */
function tierTsqueries(withoutCommon: boolean): { all: string; two: string; any: string } {
  const words = queryWords(withoutCommon);
  const joined = (op: string) => `(select string_agg(${tsqQuote('s.w')}, ' ${op} ')::tsquery from ${words} s(w))`;
  return withoutCommon
    ? { all: joined('&'), two: pairsTsquery(words), any: joined('|') }
    : { all: `plainto_tsquery('english', $8)`, two: pairsTsquery(words), any: ANY_TSQUERY };
}
const TIERS = { plain: tierTsqueries(false), withoutCommon: tierTsqueries(true) };
/** Fragment.score, in SQL over the candidates' cosine similarity and word coverage. */
const RELEVANCE = `least(1, (s.cos + ${WORD_WEIGHT} * s.words) / ${1 + WORD_WEIGHT})`;

export class RetrievalService {
  constructor(
    /** Public: the extractive answerer scores sentences with the same model. */
    readonly embedder: Embedder,
    private readonly datastores: DatastoreService,
    private readonly limits: Limits,
    private readonly reranker: Reranker | null = null,
    /** Each datastore's own model; without it, only datastores of the configured model's dimension are searched. */
    private readonly embedders: EmbedderRegistry | null = null,
    /** Vectors of recent query texts; by default none kept (concurrent identical queries still share one embedding). */
    private readonly queryVectors: QueryVectors = new QueryVectors(0),
    /** Words too common to propose text candidates, and each index's size (chunk-stats.ts). */
    private readonly stats: ChunkStats = new ChunkStats(),
  ) {}

  /**
   * A datastore query (public datastores: anyone; `origin` as in getForQuery). Outsiders (anonymous
   * callers and other organizations) spend their address's budget, as anonymous questions do: each
   * query costs an embedding. Throws NOT_FOUND, FORBIDDEN, RATE_LIMITED, BAD_USER_INPUT,
   * UPSTREAM_FAILED (the reranker).
   */
  async query(em: Em, auth: Auth, ip: string, datastoreId: string, input: SearchInput, origin?: string): Promise<Fragment[]> {
    const datastore = await this.datastores.getForQuery(em, auth, datastoreId, origin);
    if (isOutsider(auth, datastore)) await this.limits.admitVisitor(em, { scope: null, visitorId: null, ip, what: 'datastore queries' });
    return this.search(em, [datastore], input);
  }

  /**
   * Searches datastores the caller was already allowed to use; with a reranker configured, it
   * reorders the best candidates before the top K are kept. Throws BAD_USER_INPUT, UPSTREAM_FAILED.
   */
  async search(em: Em, datastores: Datastore[], input: SearchInput, signal?: AbortSignal): Promise<Fragment[]> {
    const topK = input.topK ?? TOP_K_DEFAULT;
    if (!Number.isInteger(topK) || topK < 1 || topK > TOP_K_MAX) {
      throw badInput(`topK must be a whole number from 1 to ${TOP_K_MAX}.`, { field: 'topK' });
    }
    const query = input.query?.trim();
    if (!query) throw badInput('query must not be empty.', { field: 'query' });
    if (query.length > 10_000) throw badInput('query must be at most 10,000 characters.', { field: 'query' });
    const filters = checkFilters(input.filters);
    const minScore = input.minScore ?? null;
    if (minScore != null && !(typeof minScore === 'number' && minScore >= 0 && minScore <= 1)) {
      throw badInput('minScore must be a number from 0 to 1.', { field: 'minScore' });
    }
    const groups = this.byEmbedder(datastores);
    if (!groups.size) return [];
    // The reranker chooses among more candidates than it returns.
    const wanted = this.reranker ? Math.min(Math.max(topK * 4, 20), TOP_K_MAX) : topK;
    const pool = await this.searchGroups(em, groups, query, wanted, filters, minScore, signal);
    if (!this.reranker) return pool;
    try {
      return (await this.reranker.rerank(query, pool.map((f) => f.text), topK, signal)).map((i) => pool[i]!);
    } catch (err) {
      if (err instanceof RerankError) throw new AppError('UPSTREAM_FAILED', err.message, undefined, err);
      throw err;
    }
  }

  /** Datastores by the embedder of their vectors (a query is embedded once per model); those this process cannot embed for are left out. */
  private byEmbedder(datastores: Datastore[]): Map<Embedder, string[]> {
    const groups = new Map<Embedder, string[]>();
    for (const d of datastores) {
      const embedder = this.embedders ? this.embedders.get(d.embeddingModel, d.embeddingDimension) : d.embeddingDimension === this.embedder.dimension ? this.embedder : null;
      if (!embedder) continue;
      const ids = groups.get(embedder);
      if (ids) ids.push(d.id);
      else groups.set(embedder, [d.id]);
    }
    return groups;
  }

  /** One search per model, merged by score (scores are comparable across searches: see Fragment.score). */
  private async searchGroups(em: Em, groups: Map<Embedder, string[]>, query: string, topK: number, filters: SearchFilters, minScore: number | null, signal?: AbortSignal): Promise<Fragment[]> {
    const [stats, ...vectors] = await Promise.all([this.stats.get(em), ...[...groups.keys()].map((embedder) => this.queryVectors.embed(embedder, query, signal))]).catch((err: unknown) => {
      // The endpoint's failure, in its own words: a 502, as an answer's model failing is.
      throw err instanceof EmbeddingError ? new AppError('UPSTREAM_FAILED', err.message, undefined, err) : err;
    });
    const { commonWords, indexed } = stats;
    const found = await Promise.all(
      [...groups.values()].map((ids, i) => this.searchByVector(em, ids, query, vectors[i]!, topK, filters, { minScore, commonWords, ...scanFor(indexed.get(vectors[i]!.length)) })),
    );
    if (found.length === 1) return found[0]!;
    return found.flat().sort((a, b) => b.score - a.score).slice(0, topK);
  }

  /** The SQL of a search, with the query vector given (benchmarks time embedding apart). One statement. */
  async searchByVector(em: Em, datastoreIds: string[], query: string, vector: number[], topK: number, filters: SearchFilters = {}, opts: SearchOptions = {}): Promise<Fragment[]> {
    const { sql, params } = searchSql(datastoreIds, query, vector, topK, filters, opts);
    // Prepared: its text depends only on the dimension, the mode and whether common words are left out.
    const rows = await rawQuery<Fragment & { score: string | number }>(em, sql, params, { prepared: true });
    return rows.map((r) => ({ ...r, score: Number(r.score) }));
  }
}

/** Which halves of the search rank the candidates: both (the service), or one alone (the evaluation compares them). */
export type SearchMode = 'hybrid' | 'vector' | 'text';

export interface SearchOptions {
  /** Fragments whose score is below this are dropped (0-1). */
  minScore?: number | null;
  mode?: SearchMode;
  /** hnsw.ef_search of the vector search (by the index's size: scanFor; benchmarks sweep it); HNSW_EF_SEARCH by default. */
  efSearch?: number;
  /** Lexemes that propose no text candidates (common-words.ts); none by default. */
  commonWords?: string[];
  /**
   * A search whose datastores and filters keep at most this many chunks compares them all instead
   * of scanning the HNSW index (by the index's size: scanFor); 0 (the default): always the index
   * (but for datastores and filters that keep no chunk at all).
   */
  exactUpTo?: number;
}

/**
 * Pure: the statement and its parameters. It relies on the pgvector settings every connection
 * of the service has (VECTOR_SEARCH_SETTINGS in db/vector-index.ts: iterative scan, the ef_search
 * the planner costs with) and sets the ef_search its scan runs with (HNSW_EF_SEARCH).
 *
 * The query vector is the parameter itself in the ORDER BY (`<=> $1::vector(N)`), never a column
 * of a CTE: a CTE read twice is materialized, and an ORDER BY over its column cannot use the HNSW
 * index (the search becomes an exact scan of every chunk). The vector search comes first and
 * uses $1-$7 only, so it can be run alone (benchmarks measure its recall against exact search).
 */
export function searchSql(datastoreIds: string[], query: string, vector: number[], topK: number, filters: SearchFilters = {}, opts: SearchOptions = {}) {
  const dim = vector.length;
  const mode = opts.mode ?? 'hybrid';
  const efSearch = opts.efSearch ?? HNSW_EF_SEARCH;
  if (!Number.isInteger(efSearch) || efSearch < 1 || efSearch > 1000) throw new Error(`efSearch must be a whole number from 1 to 1000, got ${efSearch}`);
  // Candidates per search: enough for the fusion to matter, bounded for speed.
  const candidates = Math.min(Math.max(topK * 4, 50), 400);
  // The datastores ($2) and filters ($3, $4), on a table's columns: the chunks', and the datasources' that count them.
  const keeps = (datastore: string, datasource: string, customId: string) => `${datastore} = any($2::uuid[])
      and ($3::uuid[] is null or ${datasource} = any($3::uuid[]))
      and ($4::text[] is null or ${customId} = any($4::text[]))`;
  const filter = keeps('c.datastore_id', 'c.datasource_id', 'c.custom_id');
  // Hybrid ranks by the relevance itself, so fragments come back in descending score; each half
  // alone (for the evaluation) keeps its own order.
  const rank = mode === 'hybrid' ? RELEVANCE : mode === 'vector' ? 's.cos' : '-s.tr';
  const common = opts.commonWords?.length ? opts.commonWords : null;
  const tiers = common ? TIERS.withoutCommon : TIERS.plain;
  const exactUpTo = opts.exactUpTo ?? 0;
  if (!Number.isInteger(exactUpTo) || exactUpTo < 0) throw new Error(`exactUpTo must be a whole number of at least 0, got ${exactUpTo}`);
  // The row is read for its distance anyway: its tsv comes along, for the scoring below.
  const nearestBy = (gate: string, order: string) => `
        select c.id, c.tsv, c.embedding::vector(${dim}) <=> $1::vector(${dim}) as d
        from chunks c
        where c.dimension = ${dim} and ${filter}${gate}
        order by ${order}
        limit $5`;
  // The scan runs with ef_search = efSearch ($6), set when its query vector is computed (just
  // before the scan starts); the connection's lower value is only what the planner costs it with.
  const throughIndex = `c.embedding::vector(${dim}) <=> (select $1::vector(${dim}) from (select set_config('hnsw.ef_search', $6::text, true)) ef)`;
  // The exact bound ($7): the chunks the datastores and filters keep, as their datasources count
  // them; at most that many are all compared (an order the index cannot serve), more go through
  // the index. Both branches are planned, one runs (each is gated by a one-time filter). Both
  // numbers are parameters, not text: the statement's text stays the same as the index grows, so
  // it is prepared once per connection (rawQuery's `prepared`).
  // A bound of 0 (none known): the index, whatever the datastores keep.
  const exact = `($7::int8 > 0 and (select kept from scope) <= $7::int8)`;
  const nearest = `(${nearestBy(`
          and ${exact}`, `(c.embedding::vector(${dim}) <=> $1::vector(${dim})) + 0`)})
        union all
        (${nearestBy(`
          and not ${exact}`, throughIndex)})`;
  const sql = `
    with scope as (
      select coalesce(sum(s.chunk_count), 0) as kept from datasources s
      where ${keeps('s.datastore_id', 's.id', 's.custom_id')}
    ),
    vec as (
      select id, d, tsv, row_number() over (order by d, id) as r
      from (${nearest}
      ) nearest
    ),
    q as (select ${ANY_TSQUERY} as tq,
                 ${tiers.all} as tq_all,
                 ${tiers.two} as tq_two,
                 ${tiers.any} as tq_any,
                 tsvector_to_array(to_tsvector('english', $8)) as words),
    -- The question's words' synonyms ($13: "word synonym synonym…", synonyms.ts), by the lexemes
    -- the word has in the question: each lexeme, quoted, and its synonyms OR-ed.
    syn as (
      select distinct on (l.lex) l.lex, (${tsqQuote('l.lex')})::tsquery as self,
             replace(plainto_tsquery('english', substr(u.e, strpos(u.e, ' ') + 1))::text, ' & ', ' | ')::tsquery as alts
      from unnest($13::text[]) u(e)
      cross join lateral unnest(tsvector_to_array(to_tsvector('english', split_part(u.e, ' ', 1)))) l(lex)
    ),
    -- Any synonym at all (null without any): a candidate holding none, most of them, is matched once, not once per word.
    syn_any as (select string_agg('(' || y.alts::text || ')', ' | ')::tsquery as tq from syn y where numnode(y.alts) > 0),
    fts as (
      select p.id, p.tsv, p.embedding, row_number() over (order by ts_rank_cd(p.tsv, q.tq) desc, p.id) as r
      from (
        -- Ranked among a bounded pool, not among every chunk that shares a word with the query:
        -- chunks with all the query's words, then with two of them, then with one, as the GIN
        -- index yields them, until the pool is full (UNION ALL under a LIMIT stops reading there).
        (select c.id, c.tsv, c.embedding from chunks c, q where c.tsv @@ q.tq_all and ${filter})
        union all
        (select c.id, c.tsv, c.embedding from chunks c, q where c.tsv @@ q.tq_two and not c.tsv @@ q.tq_all and ${filter})
        union all
        (select c.id, c.tsv, c.embedding from chunks c, q where c.tsv @@ q.tq_any and not c.tsv @@ q.tq_two and not c.tsv @@ q.tq_all and ${filter})
        limit $12
      ) p, q
      order by ts_rank_cd(p.tsv, q.tq) desc, p.id
      limit $10
    ),
    -- Each candidate arrives with what its scoring needs (the vector half's distance, or the text
    -- half's row with its vector; the tsv from either): no candidate's row is read a second time.
    candidates as (
      select coalesce(vec.id, fts.id) as id, vec.d, fts.embedding, coalesce(vec.tsv, fts.tsv) as tsv,
             coalesce(vec.r, 1000000) as vr, coalesce(fts.r, 1000000) as tr
      from vec full outer join fts on fts.id = vec.id
    ),
    scored as (
      select f.id, f.vr, f.tr,
             greatest(0, 1 - coalesce(f.d, f.embedding::vector(${dim}) <=> $1::vector(${dim}))) as cos,
             -- The query's words in the chunk: its lexemes less those words (ts_delete is a binary search per word);
             -- a word missing but for a synonym counts SYNONYM_WEIGHT.
             ((length(f.tsv) - length(ts_delete(f.tsv, q.words)))
               + ${SYNONYM_WEIGHT} * (case when f.tsv @@ (select tq from syn_any)
                   then (select count(*) from syn y where y.lex = any(q.words) and not f.tsv @@ y.self and f.tsv @@ y.alts) else 0 end)
             )::float8 / greatest(cardinality(q.words), 1) as words
      from candidates f, q
    ),
    ranked as (select s.*, ${RELEVANCE} as relevance, ${rank} as rank from scored s),
    -- The top K before the rows are read for their text: the other candidates never are.
    top as (
      select f.id, f.relevance, f.rank, f.vr from ranked f
      -- The cut compares the score as the caller reads it (rounded): minScore = a score it was shown keeps that fragment.
      where ($11::float8 is null or round(f.relevance::numeric, 6) >= $11::numeric)
      order by f.rank desc, f.vr asc
      limit $9
    )
    select c.text, round(f.relevance::numeric, 6) as score,
           coalesce(c.metadata->>'source', d.name) as source,
           c.datasource_id, d.name as datasource_name, c.page, c.custom_id, c.metadata->>'section' as section
    from top f
    join chunks c on c.id = f.id
    join datasources d on d.id = c.datasource_id
    order by f.rank desc, f.vr asc`;
  const params = [
    vectorLiteral(vector),
    datastoreIds,
    filters.datasource_ids?.length ? filters.datasource_ids : null,
    filters.custom_ids?.length ? filters.custom_ids : null,
    mode === 'text' ? 0 : candidates,
    String(efSearch),
    exactUpTo,
    textQueryOf(query),
    topK,
    mode === 'vector' ? 0 : candidates,
    opts.minScore ?? null,
    mode === 'vector' ? 0 : Math.max(candidates, FTS_POOL),
    synonymsOf(textQueryOf(query)),
    ...(common ? [common] : []),
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
