/**
 * npm run bench:ingest — text documents totalling at least 2,000 chunks ingested end to end
 * (POST /api/datasources -> transaction with the pg-boss job -> worker -> chunking -> embedding ->
 * chunk rows -> `synched`), next to a raw multi-row INSERT of the same rows (same table, columns,
 * texts, hashes, metadata and vectors) by a bare client, measured in the same run.
 *
 * The service runs in this process (start() from src/boot.ts): PGlite has one owner, and the raw
 * insert must reach the same database, through the PGlite instance itself when embedded and through
 * a bare `pg` client on PostgreSQL (DATABASE_URL). The load generator is light: a few concurrent
 * POSTs, then one status query every 25 ms.
 *
 * Embeddings come from the OpenAI-compatible test server (test/support/openai-server.ts) in a child
 * process by default, so the figure is about this service's pipeline. The embedding step is timed
 * apart, the way the workers call it (one embedDocuments per document, as many at a time as there are
 * workers), and subtracted from the end-to-end time; the time the workers actually spent inside the
 * embedder during the run is printed next to it. BENCH_EMBEDDER=local uses the shipped model instead
 * (about 14 chunks/s on 2 cores, which then dominates everything).
 *
 * Each round uses a datastore and texts of its own and removes them afterwards (then VACUUM), so
 * every round, and the raw insert, start from the same table: an HNSW insert of a vector already in
 * the index is several times cheaper and must not flatter either side.
 *
 * Env: DATABASE_URL (PostgreSQL; embedded PGlite otherwise, on disk in a temporary DATA_DIR like the
 * service's default, or BENCH_PGLITE=memory), BENCH_ROUNDS (3; the median round is shown),
 * BENCH_DOCS (100 documents of ~36 chunks), BENCH_CLIENTS (4 concurrent POSTs), BENCH_SEED,
 * BENCH_EMBEDDER=local, BENCH_TRACE=1 (database time by statement in the end-to-end phases),
 * BENCH_BEFORE=1 (the chunks table as before migration 20261129000400, to compare against),
 * BENCH_PROFILE=<file.cpuprofile> (CPU profile of the first end-to-end phase; summarise it with
 * bench/cpuprofile-summary.ts).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Session } from 'node:inspector/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pgvector from 'pgvector';
import { start } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/ids.ts';
import { splitDocument, type Piece } from '../src/ingestion/chunker.ts';
import { DATASOURCE_STATUS } from '../src/ingestion/datasource.service.ts';
import { HNSW_BUILD } from '../src/db/vector-index.ts';
import { tracePg, tracePglite, untraced, type Tracer } from './ingest-trace.ts';
import { spawnServer } from './support.ts';

/**
 * BENCH_CORPUS=files (the default): issue 19's corpus, 100 text files of 100 paragraphs of 700-900
 * characters (one chunk each: 10,000 chunks), uploaded as multipart files the way a user uploads
 * them, 384-dimensional vectors. BENCH_CORPUS=prose: 100 JSON text documents of ~36 chunks, 512
 * dimensions (the figures of earlier rounds in docs/benchmarks.md).
 */
const files = (process.env.BENCH_CORPUS ?? 'files') === 'files';
const DOCS = Number(process.env.BENCH_DOCS ?? 100);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PARAGRAPHS = files ? 100 : 36;
const DIMENSION = files ? 384 : 512;
const WORKERS = 2; // startIngestWorkers' default localConcurrency
const RAW_BATCH = 500; // rows per INSERT statement, as src/ingestion/chunk.store.ts
const WARMUP_DOCS = 4;
const local = process.env.BENCH_EMBEDDER === 'local';
const postgresUrl = process.env.DATABASE_URL && !process.env.DATABASE_URL.startsWith('pglite:') ? process.env.DATABASE_URL : null;
const pgliteInMemory = process.env.BENCH_PGLITE === 'memory';
const trace = process.env.BENCH_TRACE === '1';
const chunking = { chunkSize: 1000, chunkOverlap: 200 }; // the datastore defaults

// ---- documents: prose from a seeded generator, different texts (so vectors) for every round ----
const words =
  'policy refund customer order parcel warehouse invoice account password support answer question delivery product price discount warranty repair battery screen keyboard office holiday meeting contract payment'.split(
    ' ',
  );
const baseSeed = Number(process.env.BENCH_SEED ?? Date.now() % 1_000_000);
function makeDocuments(seed: number, count: number): string[] {
  let state = seed;
  const rand = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const sentence = () => Array.from({ length: 12 }, () => words[Math.floor(rand() * words.length)]).join(' ') + '.';
  /** A paragraph of 700-900 characters: sentences added until the drawn length is reached, then cut at a word. */
  const paragraph = (head: string) => {
    const target = 700 + Math.floor(rand() * 201);
    let p = head;
    while (p.length < target) p += ` ${sentence()}`;
    return p.slice(0, p.lastIndexOf(' ', target)) + '.';
  };
  return Array.from({ length: count }, (_, d) =>
    Array.from({ length: PARAGRAPHS }, (_, p) =>
      files ? paragraph(`Section ${seed}.${d}.${p}.`) : `Section ${seed}.${d}.${p}. ${Array.from({ length: 6 }, sentence).join(' ')}`,
    ).join('\n\n'),
  );
}

// ---- the service, in this process ----
const embeddingServer = local ? null : await spawnServer('bench/ingest-embedder.ts', { EMBEDDING_DIMENSION: String(DIMENSION) });
const dataDir = mkdtempSync(path.join(tmpdir(), 'agentbase-bench-ingest-'));
const pgTracer = trace && postgresUrl ? tracePg() : null;
const config = loadConfig({
  ...process.env,
  NODE_ENV: 'production',
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'error',
  DATA_DIR: dataDir,
  DATABASE_URL: postgresUrl ?? (pgliteInMemory ? 'pglite://memory' : ''),
  ...(embeddingServer
    ? { OPENAI_BASE_URL: embeddingServer.url, OPENAI_API_KEY: 'bench', EMBEDDING_MODEL: 'bench-embedding', EMBEDDING_DIMENSION: String(DIMENSION) }
    : { OPENAI_BASE_URL: '', OPENAI_API_KEY: '', EMBEDDING_MODEL: '' }),
});
const app = await start(config);
const base = `http://127.0.0.1:${app.port}`;
/**
 * BENCH_BEFORE=1: the chunks table as it was before migration 20261129000400 (vectors to TOAST
 * from 2 kB rows, HNSW with pgvector's default m = 16, ef_construction = 64), to measure the
 * change against in the same session. The table is empty here (a fresh database, or one a previous
 * run left empty), so the index is rebuilt at once.
 */
const before = process.env.BENCH_BEFORE === '1';
{
  // Both ways, explicitly: a kept PostgreSQL database may still have the table of a BENCH_BEFORE run.
  const exec = (text: string) => (app.db.pglite ? app.db.pglite.exec(text) : app.db.orm.em.getConnection().execute(text));
  await exec(before ? `alter table chunks reset (toast_tuple_target)` : `alter table chunks set (toast_tuple_target = 8160)`);
  await exec(`drop index if exists chunks_embedding_${DIMENSION}_hnsw`);
  await exec(
    `create index chunks_embedding_${DIMENSION}_hnsw on chunks using hnsw ((embedding::vector(${DIMENSION})) vector_cosine_ops) ${before ? '' : HNSW_BUILD} where dimension = ${DIMENSION}`,
  );
}
const tracer: Tracer | null = pgTracer ?? (trace && app.db.pglite ? tracePglite(app.db.pglite) : null);

// ---- the benchmark's own statements (status polling, the raw inserts): never the service's pool ----
const INSERT = 'insert into chunks (id, datasource_id, datastore_id, custom_id, position, page, text, content_hash, embedding, dimension, metadata) values';
const PER_ROW = 8; // $1 is the datastore, $2 custom_id (null), then 8 parameters per row
const values = (n: number) =>
  Array.from({ length: n }, (_, r) => {
    const p = (k: number) => `$${3 + r * PER_ROW + k}`;
    return `(${p(0)}::uuid, ${p(1)}::uuid, $1::uuid, $2::text, ${p(2)}::int, ${p(3)}::int, ${p(4)}, ${p(5)}, ${p(6)}::vector, ${DIMENSION}, ${p(7)}::jsonb)`;
  }).join(', ');
type Query = (text: string, params: unknown[]) => Promise<unknown>;
async function insertRows(query: Query, datastoreId: string, rows: unknown[][]) {
  for (let s = 0; s < rows.length; s += RAW_BATCH) {
    const batch = rows.slice(s, s + RAW_BATCH);
    await query(`${INSERT} ${values(batch.length)}`, [datastoreId, null, ...batch.flat()]);
  }
}

let sql: <R = any>(text: string, params?: unknown[]) => Promise<R[]>;
let rawInsert: (datastoreId: string, rows: unknown[][]) => Promise<void>;
/** PostgreSQL only: the same rows split by document over as many connections as there are workers. */
let rawInsertParallel: ((datastoreId: string, groups: unknown[][][]) => Promise<void>) | null = null;
let closeBare = async () => {};
if (postgresUrl) {
  const connect = async () => {
    const c = untraced(new pg.Client({ connectionString: postgresUrl }));
    await c.connect();
    return c;
  };
  const client = await connect();
  const clients = await Promise.all(Array.from({ length: WORKERS }, connect));
  const inTransaction = async (c: pg.Client, rows: unknown[][], datastoreId: string) => {
    await c.query('begin');
    try {
      await insertRows((text, params) => c.query(text, params), datastoreId, rows);
      await c.query('commit');
    } catch (err) {
      await c.query('rollback');
      throw err;
    }
  };
  sql = async (text, params) => (await client.query(text, params)).rows;
  rawInsert = (datastoreId, rows) => inTransaction(client, rows, datastoreId);
  rawInsertParallel = async (datastoreId, groups) => {
    await Promise.all(groups.map((rows, g) => inTransaction(clients[g]!, rows, datastoreId)));
  };
  closeBare = async () => {
    await Promise.all([client, ...clients].map((c) => c.end()));
  };
} else {
  const pglite = app.db.pglite!;
  sql = async (text, params) => (await pglite.query<any>(text, params)).rows;
  // transaction() holds PGlite's one connection for its whole length: nothing else runs inside it.
  rawInsert = async (datastoreId, rows) => {
    await pglite.transaction((tx) => insertRows((text, params) => tx.query(text, params), datastoreId, rows));
  };
}

// ---- CPU time: load-independent where wall time is not (the machine may be shared) ----
/**
 * CPU seconds so far of this process (service, PGlite and their threads) and, on PostgreSQL, of the
 * backends connected to the service's database, read from /proc (the server must run on this
 * machine; a backend that exits between two readings loses its share, so the figure is a floor).
 */
async function cpuNow(): Promise<{ self: number; backends: Map<number, number> }> {
  const { user, system } = process.cpuUsage();
  const backends = new Map<number, number>();
  if (postgresUrl) {
    const pids = await sql<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database()`);
    for (const { pid } of pids) {
      try {
        const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        backends.set(pid, (Number(f[11]) + Number(f[12])) / 100);
      } catch {
        // Not on this machine, or gone: left out.
      }
    }
  }
  return { self: (user + system) / 1e6, backends };
}
function cpuSince(a: Awaited<ReturnType<typeof cpuNow>>, b: Awaited<ReturnType<typeof cpuNow>>): { self: number; db: number } {
  let db = 0;
  for (const [pid, t] of b.backends) db += t - (a.backends.get(pid) ?? 0);
  return { self: b.self - a.self, db };
}

// ---- the service's API ----
async function call(method: string, url: string, body: unknown, token?: string) {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (!res.ok || json.errors) throw new Error(`${method} ${url} answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}
const gql = (query: string, token?: string) => call('POST', `${base}/graphql`, { query }, token);

const email = `bench-ingest-${Date.now()}-${process.pid}@example.test`;
const session = (await gql(`mutation { signUp(input: { email: "${email}", password: "bench-password", organizationName: "Bench" }) { token } }`)).data.signUp.token;
const key = (await gql(`mutation { createApiKey(input: { name: "bench" }) { key } }`, session)).data.createApiKey.key;
const newDatastore = async (name: string) => (await gql(`mutation { createDatastore(input: { name: "${name}" }) { id } }`, key)).data.createDatastore.id as string;

/** A text file sent as a browser or curl sends it: multipart/form-data, the file in the part "file". */
async function upload(datastoreId: string, fileName: string, text: string): Promise<string> {
  const form = new FormData();
  form.set('type', 'file');
  form.set('datastoreId', datastoreId);
  form.set('file', new Blob([text], { type: 'text/plain' }), fileName);
  // Encoded by the platform's own multipart writer, sent on a connection of its own: with PGlite the
  // service's event loop can stall for seconds, and a keep-alive connection the server is closing
  // meanwhile would reset a POST that cannot be retried.
  const encoded = new Response(form);
  const body = Buffer.from(await encoded.arrayBuffer());
  const { status, answer } = await new Promise<{ status: number; answer: string }>((resolve, reject) => {
    const req = httpRequest(`${base}/api/datasources`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${key}`, 'content-type': encoded.headers.get('content-type')!, 'content-length': body.length },
    });
    req.on('response', (res) => {
      let answer = '';
      res.setEncoding('utf8').on('data', (d: string) => (answer += d)).on('end', () => resolve({ status: res.statusCode ?? 0, answer }));
    });
    req.on('error', reject);
    req.end(body);
  });
  const json = JSON.parse(answer) as any;
  if (status !== 200) throw new Error(`upload answered ${status}: ${answer.slice(0, 300)}`);
  return json.id;
}

/** POSTs the documents, BENCH_CLIENTS at a time, and waits until every datasource is synched. */
async function ingest(datastoreId: string, texts: string[], prefix: string): Promise<{ seconds: number; ids: string[] }> {
  const t0 = performance.now();
  const ids: string[] = new Array(texts.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CLIENTS, texts.length) }, async () => {
      while (next < texts.length) {
        const i = next++;
        ids[i] = files ? await upload(datastoreId, `${prefix} ${i}.txt`, texts[i]!) : (await call('POST', `${base}/api/datasources`, { datastoreId, type: 'text', name: `${prefix} ${i}`, text: texts[i] }, key)).id;
      }
    }),
  );
  for (;;) {
    const [row] = await sql<{ done: number; failed: number }>(
      `select count(*) filter (where status = 'synched')::int as done, count(*) filter (where status in ('error', 'usage_limit_reached'))::int as failed from datasources where datastore_id = $1`,
      [datastoreId],
    );
    if (row!.failed) throw new Error(`${row!.failed} datasources failed`);
    if (row!.done === texts.length) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  return { seconds: (performance.now() - t0) / 1000, ids };
}

/** Runs fn over items, `concurrency` at a time. */
async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Removes a datastore with its datasources and chunks, and vacuums, so the next step starts from the same table. */
async function drop(datastoreId: string) {
  await sql(`delete from datastores where id = $1`, [datastoreId]);
  await sql(`vacuum chunks`);
  await sql(`vacuum datasources`);
}

// ---- instruments on the service's own instances (the workers and the API share them) ----
const embedder = app.services.embedder;
// The workers' time inside the embedder during a measured run.
const inRun = { on: false, calls: 0, sumMs: 0, busyMs: 0, active: 0, since: 0 };
const embedDocuments = embedder.embedDocuments.bind(embedder);
(embedder as { embedDocuments: typeof embedDocuments }).embedDocuments = async (texts, signal) => {
  if (!inRun.on) return embedDocuments(texts, signal);
  const t0 = performance.now();
  if (inRun.active++ === 0) inRun.since = t0;
  try {
    return await embedDocuments(texts, signal);
  } finally {
    const t1 = performance.now();
    inRun.calls++;
    inRun.sumMs += t1 - t0;
    if (--inRun.active === 0) inRun.busyMs += t1 - inRun.since;
  }
};
// When each document of a measured run was created, picked up by a worker (running) and synched,
// as a subscriber of datasourceStatusChanged hears it (the event bus, LISTEN/NOTIFY).
const statusTimes = new Map<string, Partial<Record<'unsynched' | 'running' | 'synched', number>>>();
await app.services.bus.subscribe(DATASOURCE_STATUS, (payload) => {
  if (!inRun.on) return;
  const { id, status } = JSON.parse(payload) as { id: string; status: string };
  if (status !== 'unsynched' && status !== 'running' && status !== 'synched') return;
  const t = statusTimes.get(id) ?? {};
  t[status] = performance.now();
  statusTimes.set(id, t);
});

// ---- warm-up: JIT, pools, prepared plans; the same path on a datastore of its own ----
{
  const warmup = await newDatastore('Bench warm-up');
  const texts = makeDocuments(baseSeed + 999, WARMUP_DOCS);
  await ingest(warmup, texts, 'warm-up');
  await embedder.embedDocuments((await splitDocument({ text: texts[0]!, metadata: {} }, chunking)).map((p) => p.text));
  await drop(warmup);
}

interface Round {
  chunks: number;
  total: number;
  embedding: number;
  raw: number;
  parallel: number | null;
  inRun: { busy: number; sum: number; calls: number };
  /** Seconds: first document's wait for a worker, average wait, sum of running -> synched. */
  workers: { n: number; firstWait: number; wait: number; run: number } | null;
  /** CPU seconds spent (this process, and PostgreSQL's backends for the service's database) end to end and by the raw insert. */
  cpu: { total: { self: number; db: number }; raw: { self: number; db: number } };
}

async function round(r: number, profile?: string): Promise<Round> {
  const documents = makeDocuments(baseSeed + r, DOCS);
  // The rows the pipeline writes, computed the same way, for the two baselines.
  const piecesByDoc: Piece[][] = await Promise.all(documents.map((text) => splitDocument({ text, metadata: {} }, chunking)));
  const chunks = piecesByDoc.reduce((n, p) => n + p.length, 0);
  const datastoreId = await newDatastore(`Bench ${r}`);

  // 1. End to end.
  const inspector = profile ? new Session() : null;
  if (inspector) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.setSamplingInterval', { interval: 200 });
    await inspector.post('Profiler.start');
  }
  const cpu0 = await cpuNow();
  Object.assign(inRun, { on: true, calls: 0, sumMs: 0, busyMs: 0, active: 0 });
  statusTimes.clear();
  tracer?.start();
  const e2e = await ingest(datastoreId, documents, 'doc');
  tracer?.stop();
  inRun.on = false;
  const cpuTotal = cpuSince(cpu0, await cpuNow());
  if (inspector) {
    const { profile: cpu } = await inspector.post('Profiler.stop');
    writeFileSync(profile!, JSON.stringify(cpu));
    inspector.disconnect();
  }
  const [{ n: stored }] = (await sql<{ n: number }>(`select count(*)::int as n from chunks where datastore_id = $1`, [datastoreId])) as [{ n: number }];
  if (stored !== chunks) throw new Error(`${stored} chunks stored, ${chunks} expected`);

  const times = [...statusTimes.values()].filter((t) => t.unsynched !== undefined && t.running !== undefined && t.synched !== undefined);
  const workers = times.length
    ? {
        n: times.length,
        firstWait: (Math.min(...times.map((t) => t.running!)) - Math.min(...times.map((t) => t.unsynched!))) / 1000,
        wait: times.reduce((n, t) => n + (t.running! - t.unsynched!), 0) / times.length / 1000,
        run: times.reduce((n, t) => n + (t.synched! - t.running!), 0) / 1000,
      }
    : null;

  // 2. The embedding step alone: same texts, same calls, same concurrency as the workers.
  const vectorsByDoc: number[][][] = new Array(DOCS);
  const t1 = performance.now();
  await pool([...documents.keys()], WORKERS, async (d) => {
    vectorsByDoc[d] = await embedder.embedDocuments(piecesByDoc[d]!.map((p) => p.text));
  });
  const embedding = (performance.now() - t1) / 1000;

  // 3. A raw multi-row INSERT of the same rows by a bare client, in one transaction. The pipeline's
  // rows are deleted and the table vacuumed first (not timed), so the insert starts from the table
  // the pipeline started from; the rows are committed, like the pipeline's.
  const rowsByDoc = piecesByDoc.map((pieces, d) => {
    const name = `doc ${d}`;
    const metadata = JSON.stringify({ datasource_name: name, source: name, custom_id: null });
    return pieces.map((p, i) => [newId(), e2e.ids[d], p.position, p.page, p.text, createHash('sha256').update(p.text).digest('hex'), pgvector.toSql(vectorsByDoc[d]![i]!), metadata]);
  });
  const rows = rowsByDoc.flat();
  const count = async () => ((await sql<{ n: number }>(`select count(*)::int as n from chunks where datastore_id = $1`, [datastoreId])) as [{ n: number }])[0].n;
  const clear = async () => {
    await sql(`delete from chunks where datastore_id = $1`, [datastoreId]);
    await sql(`vacuum chunks`);
  };
  await clear();
  const cpu2 = await cpuNow();
  const t2 = performance.now();
  await rawInsert(datastoreId, rows);
  const raw = (performance.now() - t2) / 1000;
  const cpuRaw = cpuSince(cpu2, await cpuNow());
  if ((await count()) !== chunks) throw new Error(`the raw insert stored ${await count()} chunks, ${chunks} expected`);

  // 4. PostgreSQL: the same, documents dealt round-robin over WORKERS connections at once, as the
  // workers insert in parallel too (PGlite has a single connection: there 3 is all there is).
  let parallel: number | null = null;
  if (rawInsertParallel) {
    await clear();
    const groups: unknown[][][] = Array.from({ length: WORKERS }, () => []);
    rowsByDoc.forEach((docRows, d) => groups[d % WORKERS]!.push(...docRows));
    const t3 = performance.now();
    await rawInsertParallel(datastoreId, groups);
    parallel = (performance.now() - t3) / 1000;
    if ((await count()) !== chunks) throw new Error(`the parallel raw insert stored ${await count()} chunks, ${chunks} expected`);
  }

  await drop(datastoreId);
  return { chunks, total: e2e.seconds, embedding, raw, parallel, cpu: { total: cpuTotal, raw: cpuRaw }, inRun: { busy: inRun.busyMs / 1000, sum: inRun.sumMs / 1000, calls: inRun.calls }, workers };
}

const ratio = (x: Round) => (x.total - x.embedding) / x.raw;
const rounds: Round[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const x = await round(r, r === 0 ? process.env.BENCH_PROFILE : undefined);
  rounds.push(x);
  process.stderr.write(
    `round ${r + 1}/${ROUNDS}: end to end ${x.total.toFixed(2)} s, embedding ${x.embedding.toFixed(2)} s, raw insert ${x.raw.toFixed(2)} s` +
      `${x.parallel !== null ? ` (${x.parallel.toFixed(2)} s over ${WORKERS} connections)` : ''}, ratio ${ratio(x).toFixed(2)}\n`,
  );
}

// The benchmark's user and organization go too (cascading to sessions, memberships and API keys).
await sql(`delete from organizations where id in (select organization_id from memberships m join users u on u.id = m.user_id where u.email = $1)`, [email]);
await sql(`delete from users where email = $1`, [email]);
await closeBare();
await app.stop();
await embeddingServer?.stop();
rmSync(dataDir, { recursive: true, force: true });

// ---- report: the median round (by ratio), and every round's ratio ----
const m = [...rounds].sort((a, b) => ratio(a) - ratio(b))[Math.floor((rounds.length - 1) / 2)]!;
const pipeline = m.total - m.embedding;
const seconds = (s: number) => `${s.toFixed(2)} s`.padStart(9);
const line = (label: string, s: number) => console.log(`${label.padEnd(58)} ${seconds(s)}   ${(m.chunks / s).toFixed(0).padStart(6)} chunks/s`);
const database = postgresUrl
  ? 'PostgreSQL'
  : pgliteInMemory
    ? 'embedded PGlite in memory (BENCH_PGLITE=memory)'
    : 'embedded PGlite on disk, the default (BENCH_PGLITE=memory: in memory)';
const embedderName = local
  ? 'the shipped local model (BENCH_EMBEDDER=local)'
  : 'the OpenAI-compatible test server in a child process (BENCH_EMBEDDER=local: the shipped model)';
console.log(`database: ${database}; embedder: ${embedderName}`);
console.log(
  before
    ? 'chunks table: BEFORE migration 20261129000400 (BENCH_BEFORE=1: vectors to TOAST, HNSW m = 16, ef_construction = 64)'
    : 'chunks table: as migrated (rows whole up to a page, HNSW m = 12, ef_construction = 40; BENCH_BEFORE=1 measures the earlier table)',
);
console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(
  `${DOCS} text documents per round, ${m.chunks} chunks of <= ${chunking.chunkSize} characters; ${CLIENTS} concurrent POSTs, ${WORKERS} ingest workers; ` +
    `${ROUNDS} round(s) after a warm-up, median round shown (seed ${baseSeed})`,
);
console.log('');
line('end to end (POST -> queue -> worker -> synched)', m.total);
line('embedding step alone (same calls, timed apart)', m.embedding);
line('end to end - embedding', pipeline);
line(`raw multi-row INSERT of the same rows (${RAW_BATCH} rows/statement)`, m.raw);
if (m.parallel !== null) line(`  the same over ${WORKERS} connections at once, like the workers`, m.parallel);
const perChunk = (c: { self: number; db: number }) =>
  postgresUrl
    ? `${(((c.self + c.db) * 1000) / m.chunks).toFixed(2)} ms (this process ${((c.self * 1000) / m.chunks).toFixed(2)}, PostgreSQL ${((c.db * 1000) / m.chunks).toFixed(2)})`
    : `${((c.self * 1000) / m.chunks).toFixed(2)} ms`;
console.log(
  `CPU per chunk${postgresUrl ? '' : ' (this process, the embedded database included)'}, the embedding endpoint's process left out: end to end ${perChunk(m.cpu.total)}, raw insert ${perChunk(m.cpu.raw)}`,
);
console.log(
  `  so at most ${(m.chunks / (m.cpu.total.self + m.cpu.total.db)).toFixed(0)} chunks per CPU-second end to end, ${(m.chunks / (m.cpu.raw.self + m.cpu.raw.db)).toFixed(0)} for the raw insert` +
    (postgresUrl ? ` (${cpus().length} cores: up to ${cpus().length}x that)` : ' (PGlite runs on this one thread)'),
);
console.log('');
console.log(`ratio (end to end - embedding) / raw insert: ${ratio(m).toFixed(2)} (target <= 2); every round: ${rounds.map((x) => ratio(x).toFixed(2)).join(', ')}`);
if (m.parallel !== null) {
  console.log(
    `  against the raw insert over ${WORKERS} connections: ${(pipeline / m.parallel).toFixed(2)}; every round: ${rounds.map((x) => ((x.total - x.embedding) / x.parallel!).toFixed(2)).join(', ')}`,
  );
}
console.log(
  `per document: ${((pipeline * 1000) / DOCS).toFixed(1)} ms end to end outside embedding; the raw insert of its rows ${((m.raw * 1000) / DOCS).toFixed(1)} ms`,
);
if (m.workers) {
  console.log(
    `workers: ${((m.workers.run * 1000) / m.workers.n).toFixed(1)} ms per document from running to synched, busy ${((m.workers.run / (WORKERS * m.total)) * 100).toFixed(0)}% of the end-to-end time; ` +
      `a document waited ${(m.workers.wait * 1000).toFixed(0)} ms on average for a worker (the first ${(m.workers.firstWait * 1000).toFixed(0)} ms)`,
  );
}
console.log(
  `embedder as seen by the workers during the run: busy ${m.inRun.busy.toFixed(2)} s, ${m.inRun.sum.toFixed(2)} s summed over ${m.inRun.calls} calls` +
    (postgresUrl ? '' : ' (on PGlite the database shares the event loop, so a reply waits for it: this is not embedding time)'),
);

if (tracer) {
  const list = tracer.statements();
  const db = tracer.totalMs() / 1000;
  const docs = DOCS * ROUNDS;
  const wall = rounds.reduce((n, x) => n + x.total, 0);
  console.log('');
  console.log(
    postgresUrl
      ? `database round trips in the end-to-end phases (${ROUNDS} rounds): ${list.reduce((n, s) => n + s.count, 0)} statements, ${db.toFixed(2)} s summed (overlapping: several connections) over ${wall.toFixed(2)} s`
      : `embedded database busy in the end-to-end phases (${ROUNDS} rounds): ${db.toFixed(2)} s of ${wall.toFixed(2)} s (${((db / wall) * 100).toFixed(0)}%), ${list.reduce((n, s) => n + s.count, 0)} statements (the benchmark's status polling included)`,
  );
  console.log(`${'count'.padStart(7)} ${'per doc'.padStart(8)} ${'total ms'.padStart(9)} ${'ms each'.padStart(8)}  statement`);
  for (const s of list.slice(0, Number(process.env.BENCH_TRACE_TOP ?? 25))) {
    console.log(`${String(s.count).padStart(7)} ${(s.count / docs).toFixed(2).padStart(8)} ${s.ms.toFixed(0).padStart(9)} ${(s.ms / Math.max(1, s.count)).toFixed(2).padStart(8)}  ${s.sql}`);
  }
}
process.exit(0);
