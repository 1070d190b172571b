/**
 * npm run bench:ingest — text documents totalling at least 2,000 chunks, ingested end to end
 * (REST create -> queue -> worker -> chunking -> embedding -> chunk rows -> synched), next to a
 * raw multi-row INSERT of the same rows by a bare client, measured in the same run.
 *
 * The service runs in this process: PGlite has one owner, and the raw insert must reach the same
 * database (on PGlite through the instance itself, on PostgreSQL through a bare `pg` client).
 * Embeddings come from the local OpenAI-compatible test server by default, so the figure is about
 * our pipeline; the embedding step is timed apart (the embedder on the same texts) and subtracted.
 * BENCH_EMBEDDER=local uses the shipped model instead (about 14 chunks/s on 2 cores).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pgvector from 'pgvector';
import { start } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { splitDocument } from '../src/ingestion/chunker.ts';
import { startOpenAiTestServer } from '../test/support/openai-server.ts';

const DOCS = Number(process.env.BENCH_DOCS ?? 100);
const PARAGRAPHS = 30; // ~24 chunks of 1,000 characters per document
const local = process.env.BENCH_EMBEDDER === 'local';

const words = 'policy refund customer order parcel warehouse invoice account password support answer question delivery product price discount warranty repair battery screen keyboard office holiday meeting contract payment'.split(' ');
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const sentence = () => Array.from({ length: 12 }, () => words[Math.floor(rand() * words.length)]).join(' ') + '.';
const documents = Array.from({ length: DOCS }, (_, d) =>
  Array.from({ length: PARAGRAPHS }, (_, p) => `Section ${d}.${p}. ${Array.from({ length: 6 }, sentence).join(' ')}`).join('\n\n'),
);

const model = local ? null : await startOpenAiTestServer({ embeddingDimension: 512 });
const config = loadConfig({
  ...process.env,
  NODE_ENV: 'production',
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'error',
  DATA_DIR: mkdtempSync(path.join(tmpdir(), 'agentbase-bench-ingest-')),
  DATABASE_URL: process.env.DATABASE_URL || 'pglite://memory',
  ...(model ? { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'bench', EMBEDDING_MODEL: 'bench-embedding', EMBEDDING_DIMENSION: '512' } : {}),
});
const app = await start(config);
const base = `http://127.0.0.1:${app.port}`;

async function call(method: string, url: string, body: unknown, token?: string) {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
  return (await res.json()) as any;
}
const gql = (query: string, token?: string) => call('POST', `${base}/graphql`, { query }, token);

const session = (await gql(`mutation { signUp(input: { email: "bench@example.test", password: "bench-password", organizationName: "Bench" }) { token } }`)).data.signUp.token;
const key = (await gql(`mutation { createApiKey(input: { name: "bench" }) { key } }`, session)).data.createApiKey.key;
const datastoreId = (await gql(`mutation { createDatastore(input: { name: "Bench" }) { id } }`, key)).data.createDatastore.id;

// The rows the pipeline will write, for the embedding and raw-insert baselines.
const pieces = (await Promise.all(documents.map((text) => splitDocument({ text, metadata: {} }, { chunkSize: 1000, chunkOverlap: 200 })))).flat();
const texts = pieces.map((p) => p.text);

// 1. End to end.
const t0 = performance.now();
const ids = await Promise.all(documents.map(async (text, i) => (await call('POST', `${base}/api/datasources`, { datastoreId, type: 'text', name: `doc ${i}`, text }, key)).id as string));
const em = app.db.orm.em.fork();
for (;;) {
  const [row] = await em.getConnection().execute(`select count(*) filter (where status = 'synched')::int as done, count(*) filter (where status = 'error')::int as failed, coalesce(sum(chunk_count), 0)::int as chunks from datasources where datastore_id = ?`, [datastoreId]);
  if (row.failed) throw new Error(`${row.failed} datasources failed`);
  if (row.done === ids.length) break;
  await new Promise((r) => setTimeout(r, 20));
}
const total = (performance.now() - t0) / 1000;
const [{ n: stored }] = await em.getConnection().execute(`select count(*)::int as n from chunks where datastore_id = ?`, [datastoreId]);

// 2. The embedding step alone, on the same texts, through the same embedder.
const t1 = performance.now();
const vectors = await app.services.embedder.embedDocuments(texts);
const embedding = (performance.now() - t1) / 1000;

// 3. A raw multi-row INSERT of the same rows (500 per statement), by a bare client.
const [{ id: anyDatasource }] = await em.getConnection().execute(`select id from datasources where datastore_id = ? limit 1`, [datastoreId]);
const columns = '(id, datasource_id, datastore_id, custom_id, position, page, text, content_hash, embedding, dimension, metadata)';
const rowsSql = (n: number) => Array.from({ length: n }, (_, i) => `(gen_random_uuid(), $1, $2, null, $${3 + i * 3}, null, $${4 + i * 3}, 'x', $${5 + i * 3}::vector, 512, '{}')`).join(', ');
const runRaw: (sql: string, params: unknown[]) => Promise<unknown> = process.env.DATABASE_URL
  ? await (async () => {
      const client = new pg.Client({ connectionString: app.db.orm.config.get('clientUrl') as string });
      await client.connect();
      return (sql: string, params: unknown[]) => client.query(sql, params);
    })()
  : (sql, params) => app.db.pglite!.query(sql, params);
const t2 = performance.now();
await runRaw('begin', []);
for (let s = 0; s < texts.length; s += 500) {
  const batch = texts.slice(s, s + 500);
  const params: unknown[] = [anyDatasource, datastoreId];
  batch.forEach((text, i) => params.push(s + i, text, pgvector.toSql(vectors[s + i]!)));
  await runRaw(`insert into chunks ${columns} values ${rowsSql(batch.length)}`, params);
}
await runRaw('rollback', []); // leave the table as the pipeline left it
const raw = (performance.now() - t2) / 1000;

await app.stop();
await model?.close();

const pipeline = total - embedding;
const fmt = (s: number) => `${s.toFixed(2)} s`.padStart(9);
console.log(`database: ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}; embedder: ${local ? 'local model' : 'local OpenAI-compatible test server'}; ${DOCS} documents, ${texts.length} chunks (${stored} stored)`);
console.log(`end to end (REST -> queue -> worker -> chunks)   ${fmt(total)}   ${(texts.length / total).toFixed(0).padStart(6)} chunks/s`);
console.log(`  of which embedding (timed apart)               ${fmt(embedding)}`);
console.log(`  everything except embedding                    ${fmt(pipeline)}   ${(texts.length / pipeline).toFixed(0).padStart(6)} chunks/s`);
console.log(`raw multi-row INSERT of the same rows            ${fmt(raw)}   ${(texts.length / raw).toFixed(0).padStart(6)} chunks/s`);
console.log(`ratio (end to end - embedding) / raw insert: ${(pipeline / raw).toFixed(2)} (target <= 2)`);
process.exit(0);
