/**
 * npm run bench:scale — what more processes buy on one PostgreSQL (docs/operations.md, Deployment).
 *
 * 1. Ingestion: the same corpus (BENCH_DOCS text documents of ~BENCH_PARAGRAPHS chunks) posted
 *    through one API process (ROLE=api) and processed by 1, 2 and 4 worker processes (ROLE=worker,
 *    `npm run worker`); chunks/s from the first POST until every document is `synched`, and the
 *    ratio to one worker. Between rounds the chunks are deleted and the table vacuumed, so every
 *    round starts from the same index.
 * 2. Queries: datastore queries (POST /api/datastores/:id/query, BENCH_CLIENTS at a time for
 *    BENCH_SECONDS) against 1 and then 2 API processes, requests spread evenly; requests/s, p50 and
 *    p99, and the ratio to one process.
 *
 * The embedding endpoint is the OpenAI-compatible test server in a process of its own, holding every
 * embeddings call for BENCH_EMBED_LATENCY_MS (20), as a remote model endpoint would: ingestion and
 * queries both wait for it. Processes are started exactly as `npm start` starts them (src/main.ts).
 *
 * Env: BENCH_DATABASE_URL (default: the test server, postgres://postgres@127.0.0.1:55432/postgres; a
 * fresh database is created there and dropped), BENCH_DOCS (40), BENCH_PARAGRAPHS (32),
 * BENCH_EMBED_LATENCY_MS (20), BENCH_CLIENTS (16), BENCH_SECONDS (10), BENCH_WORKERS ("1,2,4").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { corpus, rng, WORDS } from './corpus.ts';
import { f1, f2, freshDatabase, graphql, pct, postJson, spawnChild, table } from './lib.ts';
import { freePort, killAll, signal, spawnMain, type ServiceProcess } from '../test/support/process.ts';
import { waitFor } from '../test/support/wait.ts';

const server = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:55432/postgres';
const DOCS = Number(process.env.BENCH_DOCS ?? 40);
const PARAGRAPHS = Number(process.env.BENCH_PARAGRAPHS ?? 32);
const LATENCY_MS = Number(process.env.BENCH_EMBED_LATENCY_MS ?? 20);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WORKER_COUNTS = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);

// ---- the same corpus for every round: topic words and filler, a chunk (~900 characters) per paragraph ----
const { topics, queries } = corpus(7, 24, 200);
function documents(): string[] {
  const random = rng(11);
  const word = () => WORDS[Math.floor(random() * WORDS.length)]!;
  return Array.from({ length: DOCS }, (_, d) =>
    Array.from({ length: PARAGRAPHS }, (_, p) => {
      const topic = topics[(d * PARAGRAPHS + p) % topics.length]!;
      return `Part ${d}.${p}. ${topic.join(' ')}. ${Array.from({ length: 130 }, word).join(' ')}.`;
    }).join('\n\n'),
  );
}

// ---- the outside parts: the embedding endpoint and a fresh database ----
const embedder = await spawnChild('bench/ingest-embedder.ts', { EMBEDDING_DIMENSION: '512', EMBEDDING_DELAY_MS: String(LATENCY_MS) });
const database = await freshDatabase(server, `bench_scale_${process.pid}`);
const dataDir = mkdtempSync(path.join(tmpdir(), 'agentbase-bench-scale-'));
const sql = new pg.Client({ connectionString: database.url });
const env = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  DATA_DIR: dataDir,
  DATABASE_URL: database.url,
  OPENAI_BASE_URL: embedder.url,
  OPENAI_API_KEY: 'bench',
  EMBEDDING_MODEL: 'bench-embedding',
  EMBEDDING_DIMENSION: '512',
  RATE_LIMIT_IP_PER_MINUTE: '1000000',
};

async function startProcess(role: 'api' | 'worker'): Promise<{ proc: ServiceProcess; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // A worker says it is up at LOG_LEVEL=info (and logs little else); an API process would log every request.
  const proc = spawnMain({ ...env, ROLE: role, PORT: String(port), LOG_LEVEL: role === 'worker' ? 'info' : 'warn' });
  if (role === 'worker') await proc.waitForLog('workers started', 120_000);
  else await waitFor(async () => (await fetch(`${url}/readyz`).catch(() => null))?.ok, 120_000, 'the API process to be ready');
  return { proc, url };
}
async function stopProcess(p: { proc: ServiceProcess }) {
  signal(p.proc.child, 'SIGTERM');
  await p.proc.exited;
}

try {
  await sql.connect();
  const api = await startProcess('api'); // the first one migrates the fresh database
  const signUp = await graphql(api.url, `mutation($i: SignUpInput!) { signUp(input: $i) { token } }`, { i: { email: 'bench@scale.test', password: 'correct horse battery', organizationName: 'Bench' } });
  const key = (await graphql(api.url, `mutation { createApiKey(input: { name: "bench" }) { key } }`, {}, signUp.signUp.token)).createApiKey.key as string;
  const auth = { authorization: `Bearer ${key}` };
  const texts = documents();

  // ---- 1. ingestion with 1, 2, 4 workers ----
  const ingestion: { workers: number; chunks: number; seconds: number; rate: number }[] = [];
  let store = '';
  for (const count of WORKER_COUNTS) {
    if (store) {
      await graphql(api.url, `mutation($id: ID!) { deleteDatastore(id: $id) { id } }`, { id: store }, key);
      await sql.query('vacuum analyze chunks');
    }
    store = (await graphql(api.url, `mutation { createDatastore(input: { name: "Scale" }) { id } }`, {}, key)).createDatastore.id;
    const workers = await Promise.all(Array.from({ length: count }, () => startProcess('worker')));
    const t0 = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < texts.length; i++) {
      const res = await postJson(`${api.url}/api/datasources`, { datastoreId: store, type: 'text', name: `Doc ${i}`, text: texts[i] }, auth);
      if (res.status !== 200) throw new Error(`POST /api/datasources: ${res.status} ${JSON.stringify(res.body)}`);
      ids.push(res.body.id);
    }
    for (;;) {
      const { rows } = await sql.query<{ status: string; n: number; chunks: string }>('select status, count(*)::int as n, sum(chunk_count) as chunks from datasources where datastore_id = $1 group by status', [store]);
      const synched = rows.find((r) => r.status === 'synched');
      if (rows.some((r) => r.status === 'error')) throw new Error(`a document failed: ${JSON.stringify(rows)}`);
      if (synched?.n === ids.length) {
        const seconds = (performance.now() - t0) / 1000;
        const chunks = Number(synched.chunks);
        ingestion.push({ workers: count, chunks, seconds, rate: chunks / seconds });
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await Promise.all(workers.map(stopProcess));
  }

  // ---- 2. datastore queries against 1 and 2 API processes ----
  const second = await startProcess('api');
  const querying: { processes: number; requests: number; rps: number; p50: number; p99: number }[] = [];
  for (const targets of [[api.url], [api.url, second.url]]) {
    const times: number[] = [];
    let failed = 0;
    let next = 0;
    const until = performance.now() + SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (performance.now() < until) {
          const n = next++;
          const res = await postJson(`${targets[n % targets.length]}/api/datastores/${store}/query`, { query: queries[n % queries.length]!.text, topK: 5 }, auth);
          if (res.status === 200) times.push(res.ms);
          else failed++;
        }
      }),
    );
    if (failed) throw new Error(`${failed} queries failed`);
    const seconds = (performance.now() - t0) / 1000;
    querying.push({ processes: targets.length, requests: times.length, rps: times.length / seconds, p50: pct(times, 50), p99: pct(times, 99) });
  }
  await Promise.all([stopProcess(api), stopProcess(second)]);

  const load = os.loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`bench:scale on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), load average now ${load}; PostgreSQL at ${new URL(server).host}`);
  console.log(`embedding endpoint: ${LATENCY_MS} ms per call; corpus: ${DOCS} documents, ${ingestion[0]?.chunks ?? 0} chunks\n`);
  const one = ingestion[0]!.rate;
  console.log(table([['workers', 'chunks', 'seconds', 'chunks/s', 'ratio to 1'], ...ingestion.map((r) => [r.workers, r.chunks, f1(r.seconds), f1(r.rate), f2(r.rate / one)])]));
  console.log('');
  const single = querying[0]!.rps;
  console.log(table([['API processes', 'queries', 'req/s', 'p50 ms', 'p99 ms', 'ratio to 1'], ...querying.map((r) => [r.processes, r.requests, f1(r.rps), f1(r.p50), f1(r.p99), f2(r.rps / single)])]));
  console.log(`\n(${CLIENTS} clients for ${SECONDS} s each)`);
} finally {
  killAll();
  await sql.end().catch(() => {});
  await embedder.stop();
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
