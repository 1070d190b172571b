/**
 * The datastore query's statement as it was before issue 19's stop of h-query (src/retrieval/
 * retrieval.service.ts at commit 5935a41), kept for bench:query to measure beside the current one
 * in the same run. Not used by the service.
 */
import { HNSW_EF_SEARCH } from '../src/db/vector-index.ts';
import { vectorLiteral } from '../src/db/vector.type.ts';
import type { SearchFilters, SearchOptions } from '../src/retrieval/retrieval.service.ts';

/**
 * How many chunks matching the query's words the text search ranks at most. Ranking every match
 * grows with the datastore (a common word matches thousands of chunks); the pool takes chunks
 * with more of the query's words first, so what it leaves out shares one word with the query and
 * would score at most 1/(number of words) on that half of the relevance.
 */
const FTS_POOL = 100;

/**
 * How many of the query's words the text half reads: each is a GIN lookup and a term of the
 * ranking, so a pasted page (a query may hold 10,000 characters) took seconds to minutes of
 * database time. The vector half still reads the whole query.
 */
const TEXT_QUERY_WORDS = 64;

/** The query as the text half reads it: its first TEXT_QUERY_WORDS words. */
function textQueryOf(query: string): string {
  const words = query.split(/\s+/).filter(Boolean);
  return words.length <= TEXT_QUERY_WORDS ? query : words.slice(0, TEXT_QUERY_WORDS).join(' ');
}
/**
 * The query's words two by two, OR-ed ("a & b | a & c | b & c"): chunks with at least two of them.
 * Null for fewer than two words (the tier then matches nothing). The lexemes come stemmed from
 * to_tsvector and are quoted for tsquery's input syntax (quotes and backslashes doubled). Pairs of
 * the first 16 words at most (120 pairs): a 10,000-character query would otherwise make millions.
 */
const tsqQuote = (lexeme: string) => `'''' || replace(replace(${lexeme}, '\\', '\\\\'), '''', '''''') || ''''`;
const PAIR_WORDS = `(select w from unnest(tsvector_to_array(to_tsvector('english', $6))) w limit 16)`;
const PAIRS_TSQUERY = `(select string_agg(${tsqQuote('a.w')} || ' & ' || ${tsqQuote('b.w')}, ' | ')::tsquery
                 from ${PAIR_WORDS} a, ${PAIR_WORDS} b where a.w < b.w)`;
/** Fragment.score, in SQL over the candidates' cosine similarity and word coverage. */
const RELEVANCE = 'least(1, (s.cos + s.words) / 2)';

/**
 * Pure: the statement and its parameters. It relies on the pgvector settings every connection
 * of the service has (VECTOR_SEARCH_SETTINGS in db/vector-index.ts: iterative scan, the ef_search
 * the planner costs with) and sets the ef_search its scan runs with (HNSW_EF_SEARCH).
 *
 * The query vector is the parameter itself in the ORDER BY (`<=> $1::vector(N)`), never a column
 * of a CTE: a CTE read twice is materialized, and an ORDER BY over its column cannot use the HNSW
 * index (the search becomes an exact scan of every chunk). The vector search comes first and
 * uses $1-$5 only, so it can be run alone (benchmarks measure its recall against exact search).
 */
export function searchSqlBefore(datastoreIds: string[], query: string, vector: number[], topK: number, filters: SearchFilters = {}, opts: SearchOptions = {}) {
  const dim = vector.length;
  const mode = opts.mode ?? 'hybrid';
  const efSearch = opts.efSearch ?? HNSW_EF_SEARCH;
  if (!Number.isInteger(efSearch) || efSearch < 1 || efSearch > 1000) throw new Error(`efSearch must be a whole number from 1 to 1000, got ${efSearch}`);
  // Candidates per search: enough for the fusion to matter, bounded for speed.
  const candidates = Math.min(Math.max(topK * 4, 50), 400);
  const filter = `c.datastore_id = any($2::uuid[])
      and ($3::uuid[] is null or c.datasource_id = any($3::uuid[]))
      and ($4::text[] is null or c.custom_id = any($4::text[]))`;
  // Hybrid ranks by the relevance itself, so fragments come back in descending score; each half
  // alone (for the evaluation) keeps its own order.
  const rank = mode === 'hybrid' ? RELEVANCE : mode === 'vector' ? 's.cos' : '-s.tr';
  const sql = `
    with vec as (
      select id, d, row_number() over (order by d, id) as r
      from (
        select c.id, c.embedding::vector(${dim}) <=> $1::vector(${dim}) as d
        from chunks c
        where c.dimension = ${dim} and ${filter}
        -- The scan runs with ef_search = efSearch, set when its query vector is computed (just before
        -- the scan starts); the connection's lower value is only what the planner costs it with.
        order by c.embedding::vector(${dim}) <=> (select $1::vector(${dim}) from (select set_config('hnsw.ef_search', '${efSearch}', true)) ef)
        limit $5
      ) nearest
    ),
    q as (select to_tsquery('english', replace(plainto_tsquery('english', $6)::text, ' & ', ' | ')) as tq,
                 plainto_tsquery('english', $6) as tq_all,
                 ${PAIRS_TSQUERY} as tq_two,
                 tsvector_to_array(to_tsvector('english', $6)) as words),
    fts as (
      select p.id, p.tsv, row_number() over (order by ts_rank_cd(p.tsv, q.tq) desc, p.id) as r
      from (
        -- Ranked among a bounded pool, not among every chunk that shares a word with the query:
        -- chunks with all the query's words, then with two of them, then with one, as the GIN
        -- index yields them, until the pool is full (UNION ALL under a LIMIT stops reading there).
        (select c.id, c.tsv from chunks c, q where c.tsv @@ q.tq_all and ${filter})
        union all
        (select c.id, c.tsv from chunks c, q where c.tsv @@ q.tq_two and not c.tsv @@ q.tq_all and ${filter})
        union all
        (select c.id, c.tsv from chunks c, q where c.tsv @@ q.tq and not c.tsv @@ q.tq_two and not c.tsv @@ q.tq_all and ${filter})
        limit $10
      ) p, q
      order by ts_rank_cd(p.tsv, q.tq) desc, p.id
      limit $8
    ),
    candidates as (
      select coalesce(vec.id, fts.id) as id, vec.d, coalesce(vec.r, 1000000) as vr, coalesce(fts.r, 1000000) as tr
      from vec full outer join fts on fts.id = vec.id
    ),
    scored as (
      select f.id, f.vr, f.tr,
             greatest(0, 1 - coalesce(f.d, c.embedding::vector(${dim}) <=> $1::vector(${dim}))) as cos,
             -- The query's words in the chunk: its lexemes less those words (ts_delete is a binary search per word).
             (length(c.tsv) - length(ts_delete(c.tsv, q.words)))::float8 / greatest(cardinality(q.words), 1) as words
      from candidates f join chunks c on c.id = f.id, q
    ),
    ranked as (select s.*, ${RELEVANCE} as relevance, ${rank} as rank from scored s),
    -- The top K before the rows are read for their text: the other candidates never are.
    top as (
      select f.id, f.relevance, f.rank, f.vr from ranked f
      -- The cut compares the score as the caller reads it (rounded): minScore = a score it was shown keeps that fragment.
      where ($9::float8 is null or round(f.relevance::numeric, 6) >= $9::numeric)
      order by f.rank desc, f.vr asc
      limit $7
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
    textQueryOf(query),
    topK,
    mode === 'vector' ? 0 : candidates,
    opts.minScore ?? null,
    mode === 'vector' ? 0 : Math.max(candidates, FTS_POOL),
  ];
  return { sql, params };
}
