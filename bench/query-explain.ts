/**
 * Where the datastore query's statement spends its time, on a corpus kept by bench:query
 * (BENCH_DATABASE): EXPLAIN (ANALYZE, BUFFERS) of the hybrid statement and of its vector half for
 * a few of the corpus's queries, each run twice (the second run is the one shown: pages cached),
 * and the p50 of each plan node's own time (its time less its children's) over those queries.
 *
 *   DATABASE_URL=postgres://…/<BENCH_DATABASE>_<chunks> node --import @swc-node/register/esm-register bench/query-explain.ts
 *
 * Env: EXPLAIN_QUERIES (10), EXPLAIN_FILTER (unfiltered | custom_ids | datasource_ids),
 *      EXPLAIN_PLAN=1 (print the whole plan of the first query), EXPLAIN_CHUNKS (50000; files: 10000),
 *      EXPLAIN_CORPUS (clusters | files, as BENCH_CORPUS; files embeds with the endpoint stand-in).
 */
import pg from 'pg';
import { vectorSessionSql } from '../src/db/vector-index.ts';
import { createEmbedder } from '../src/providers/embeddings.ts';
import { commonWordsSql } from '../src/retrieval/common-words.ts';
import { searchSql, type SearchFilters } from '../src/retrieval/retrieval.service.ts';
import { startOpenAiTestServer } from '../test/support/openai-server.ts';
import { corpus, filesCorpus } from './corpus.ts';
import { corpusName, f1, pct, table } from './lib.ts';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL: the database bench:query kept (BENCH_DATABASE)');
const QUERIES = Number(process.env.EXPLAIN_QUERIES ?? 10);
const FILTER = process.env.EXPLAIN_FILTER ?? 'unfiltered';
const FILES = process.env.EXPLAIN_CORPUS === 'files';
const CHUNKS = Number(process.env.EXPLAIN_CHUNKS ?? (FILES ? 10000 : 50000));
const spec = FILES ? { chunks: CHUNKS, datasources: CHUNKS / 100, clusters: 0, queries: 50, seed: 42 } : { chunks: CHUNKS, datasources: 300, clusters: 500, queries: 50, seed: 42 };

const client = new pg.Client({ connectionString: url });
await client.connect();
await client.query(vectorSessionSql());
const ds = (await client.query(`select id from datastores where name = $1 order by created_at desc limit 1`, [corpusName(spec)])).rows[0];
if (!ds) throw new Error(`no datastore "${corpusName(spec)}" in that database`);
const sources = (await client.query(`select id, custom_id from datasources where datastore_id = $1 order by custom_id`, [ds.id])).rows;
const filtersOf = (q: number): SearchFilters =>
  FILTER === 'custom_ids'
    ? { custom_ids: [0, 1, 2, 3, 4].map((i) => sources[(q * 7 + i * 61) % sources.length].custom_id) }
    : FILTER === 'datasource_ids'
      ? { datasource_ids: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => sources[(q * 7 + i * 29) % sources.length].id) }
      : {};

const standIn = FILES ? await startOpenAiTestServer({ embeddingDimension: 384 }) : null;
const embedder = standIn
  ? createEmbedder({ openai: { baseUrl: standIn.url, apiKey: 'x' }, embedding: { provider: 'openai', model: 'text-embedding-3-small', dimension: 384, batchSize: 512 } } as never)
  : createEmbedder({ openai: null, embedding: { provider: 'local', model: 'universal-sentence-encoder-lite', dimension: 512, batchSize: 32 } } as never);
const commonWords: string[] = (await client.query(commonWordsSql().sql, commonWordsSql().params)).rows[0].words;
const texts = (FILES ? filesCorpus(spec.seed, spec.datasources, 100, spec.queries) : corpus(spec.seed, spec.clusters, spec.queries)).queries.slice(0, QUERIES).map((q) => q.text);
const vectors = await Promise.all(texts.map((t) => embedder.embedQuery(t)));
await standIn?.close();

interface Node {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Subplan Name'?: string;
  'CTE Name'?: string;
  'Actual Total Time': number;
  'Actual Loops': number;
  Plans?: Node[];
}
/** Each node's own time (ms, all loops) under a readable label. */
function selfTimes(node: Node, out: Map<string, number>, path = ''): void {
  const label = `${path}${node['Node Type']}${node['Relation Name'] ? ` ${node['Relation Name']}` : ''}${node['Index Name'] ? ` (${node['Index Name']})` : ''}${node['Subplan Name'] ? ` [${node['Subplan Name']}]` : ''}${node['CTE Name'] ? ` <${node['CTE Name']}>` : ''}`;
  const total = node['Actual Total Time'] * node['Actual Loops'];
  const children = (node.Plans ?? []).reduce((s, c) => s + c['Actual Total Time'] * c['Actual Loops'], 0);
  let key = label;
  for (let i = 2; out.has(key); i++) key = `${label} #${i}`;
  out.set(key, Math.max(0, total - children));
  for (const c of node.Plans ?? []) selfTimes(c, out, `${path}  `);
}

async function explain(sql: string, params: unknown[]) {
  await client.query(`explain (analyze, buffers, format json) ${sql}`, params);
  const { rows } = await client.query(`explain (analyze, buffers, format json) ${sql}`, params);
  return rows[0]['QUERY PLAN'][0] as { Plan: Node; 'Planning Time': number; 'Execution Time': number };
}

for (const mode of ['hybrid', 'vector'] as const) {
  const nodes = new Map<string, number[]>();
  const planning: number[] = [];
  const execution: number[] = [];
  for (let q = 0; q < texts.length; q++) {
    const s = searchSql([ds.id], texts[q]!, vectors[q]!, 10, filtersOf(q), { commonWords });
    let { sql, params } = s;
    if (mode === 'vector') {
      const cut = sql.indexOf('q as (select');
      sql = `${sql.slice(0, cut).trimEnd().replace(/,$/, '')}\n    select id::text as id from vec order by r limit 10`;
      const used = Math.max(...[...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
      params = params.slice(0, used);
    }
    const plan = await explain(sql, params);
    if (q === 0 && process.env.EXPLAIN_PLAN) {
      const { rows } = await client.query(`explain (analyze, buffers) ${sql}`, params);
      process.stdout.write(`${rows.map((r) => r['QUERY PLAN']).join('\n')}\n\n`);
    }
    planning.push(plan['Planning Time']);
    execution.push(plan['Execution Time']);
    const own = new Map<string, number>();
    selfTimes(plan.Plan, own);
    for (const [k, v] of own) nodes.set(k, [...(nodes.get(k) ?? []), v]);
  }
  process.stdout.write(`${mode} (${FILTER}, ${CHUNKS} chunks, ${texts.length} queries): planning p50 ${f1(pct(planning, 50))} ms, execution p50 ${f1(pct(execution, 50))} ms\n`);
  const rows: (string | number)[][] = [['node (own time, all loops)', 'p50 ms', 'max ms']];
  for (const [k, v] of nodes) if (pct(v, 50) >= 0.05 || Math.max(...v) >= 0.5) rows.push([k, pct(v, 50).toFixed(2), Math.max(...v).toFixed(2)]);
  process.stdout.write(`${table(rows)}\n\n`);
}
await client.end();
process.exit(0);
