/**
 * npm run bench:queue — 1,000 text documents queued at once (POST /api/datasources, all in
 * flight together) while agent reads go on: every document must reach `synched`, and
 * GET /api/agents/{id} must keep its p99 under 50 ms throughout. The same reads are timed on
 * the idle service first, in the same run, so the figure can be given as a ratio on a shared
 * machine.
 *
 * The service (bench/serve-app.ts) and the OpenAI-compatible test server (embeddings) each run
 * in their own process. Embedded PGlite unless DATABASE_URL is set (then a fresh database on
 * that server, dropped at the end).
 *
 * Env: BENCH_DOCS (1000), BENCH_READERS (4 clients reading the agent one request after another),
 * BENCH_IDLE_READS (500 per reader on the idle service), BENCH_READ_RATE (reads a second of all
 * readers together, 100; each reader starts a read every READERS/RATE seconds, or at once when its
 * last one ended late: the same read load on a fast and a slow service, so the ingestion rates of
 * two runs compare; 0 = every reader reads again the moment its last read ends), BENCH_PROBE=1 (also print where the
 * reads waited, measured inside the service by bench/probe.ts).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agent, describeDatabase, f1, f2, freshDatabase, graphql, pct, spawnChild, table } from './lib.ts';

const DOCS = Number(process.env.BENCH_DOCS ?? 1000);
const READERS = Number(process.env.BENCH_READERS ?? 4);
const IDLE_READS = Number(process.env.BENCH_IDLE_READS ?? 500);
const READ_RATE = Number(process.env.BENCH_READ_RATE ?? 100);
/** Milliseconds between the starts of one reader's reads (0: none). */
const READ_EVERY = READ_RATE > 0 ? (READERS / READ_RATE) * 1000 : 0;
const TARGET_P99_MS = 50;

/**
 * The POSTs share 64 kept-alive connections: 1,000 fresh connections at once overflow the
 * server's accept backlog (511) whenever its event loop is busy, as it is with the embedded
 * database in it, and the kernel resets the rest. All 1,000 are still sent at once.
 */
const posting = new http.Agent({ keepAlive: true, maxSockets: 64 });

const log = (s = '') => process.stdout.write(`${s}\n`);
const progress = (s: string) => process.stderr.write(`bench:queue: ${s}\n`);

function request(method: string, url: string, token: string, body?: unknown, retry = true, via: http.Agent = agent): Promise<{ status: number; body: any; ms: number }> {
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(url, { method, agent: via, headers: { authorization: `Bearer ${token}`, ...(data ? { 'content-type': 'application/json', 'content-length': data.length } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, ms: performance.now() - t0 }));
      res.on('error', reject);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A kept-alive socket the server closed while idle: send again, once (nothing was received).
      if (retry && req.reusedSocket && err.code === 'ECONNRESET') return resolve(request(method, url, token, body, false, via));
      reject(err);
    });
    req.end(data);
  });
}

const document = (i: number) =>
  Array.from({ length: 6 }, (_, p) => `Document ${i}, part ${p}: the queue benchmark writes this paragraph so that each document makes a few chunks of ordinary prose about topic ${i}.`).join('\n\n');

/** While true, the readers keep reading the agent. */
let ingesting = false;

/** The service's own figures, phase by phase (bench/probe.ts), when BENCH_PROBE is set. */
const probeFile = process.env.BENCH_PROBE ? path.join(mkdtempSync(path.join(tmpdir(), 'bench-queue-')), 'probe.jsonl') : '';
const probePhases = () => (probeFile && existsSync(probeFile) ? readFileSync(probeFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
/** Ends a phase of the probe's figures and waits until the service has written them. */
async function cutProbe(): Promise<void> {
  if (!probeFile) return;
  const before = probePhases().length;
  app.child.kill('SIGUSR2');
  while (probePhases().length === before) await new Promise((r) => setTimeout(r, 50));
}

const adminUrl = process.env.DATABASE_URL || '';
const database = adminUrl ? await freshDatabase(adminUrl, `agentbase_bench_queue_${process.pid}`) : null;
const model = await spawnChild('bench/openai-serve.ts');
const app = await spawnChild('bench/serve-app.ts', {
  DATABASE_URL: database?.url ?? '',
  OPENAI_BASE_URL: model.url,
  OPENAI_API_KEY: 'bench',
  EMBEDDING_MODEL: 'text-embedding-3-small',
  EMBEDDING_DIMENSION: '256',
  RATE_LIMIT_IP_PER_MINUTE: '1000000',
  BENCH_PROBE: probeFile,
});

try {
  const signUp = await graphql(app.url, `mutation { signUp(input: { email: "bench-queue@example.test", password: "bench-password", organizationName: "Bench" }) { token } }`);
  const token: string = signUp.signUp.token;
  const created = await graphql(app.url, `mutation { createAgent(input: { name: "Bench", visibility: public }) { id } }`, {}, token);
  const agentId: string = created.createAgent.id;
  const store = await graphql(app.url, `mutation { createDatastore(input: { name: "Queue", visibility: private }) { id } }`, {}, token);
  const datastoreId: string = store.createDatastore.id;
  const agentUrl = `${app.url}/api/agents/${agentId}`;

  const readAgent = async (into: number[]) => {
    const r = await request('GET', agentUrl, token);
    if (r.status !== 200) throw new Error(`GET /agents/{id}: ${r.status} ${JSON.stringify(r.body)}`);
    into.push(r.ms);
    if (READ_EVERY > r.ms) await new Promise((resolve) => setTimeout(resolve, READ_EVERY - r.ms));
  };

  progress(`agent reads on the idle service: ${READERS} readers x ${IDLE_READS}…`);
  for (let i = 0; i < 50; i++) await readAgent([]);
  await cutProbe(); // what came before (sign-up, warm-up) is no phase
  const idle: number[] = [];
  await Promise.all(Array.from({ length: READERS }, async () => {
    for (let i = 0; i < IDLE_READS; i++) await readAgent(idle);
  }));

  /** Whether any document is still waiting or being read, and up to 100 that ended in error. */
  const remaining = async () => {
    const page = (status: string) => `${status}: datasources(datastoreId: $d, status: ${status}, first: 100) { nodes { id errorMessage } }`;
    const r = await graphql(app.url, `query($d: ID!) { ${['unsynched', 'pending', 'running', 'error', 'usage_limit_reached'].map(page).join(' ')} }`, { d: datastoreId }, token);
    return { busy: r.unsynched.nodes.length + r.pending.nodes.length + r.running.nodes.length, failed: [...r.error.nodes, ...r.usage_limit_reached.nodes] as { id: string; errorMessage: string | null }[] };
  };

  await cutProbe(); // idle
  progress(`queueing ${DOCS} documents at once, reading the agent meanwhile…`);
  const busy: number[] = [];
  ingesting = true;
  const readers = Promise.all(Array.from({ length: READERS }, async () => {
    while (ingesting) await readAgent(busy);
  }));
  // Awaited below; until then a failed read must not end the process before `finally` stops the children.
  readers.catch(() => {});
  const t0 = performance.now();
  const posts = await Promise.all(Array.from({ length: DOCS }, (_, i) => request('POST', `${app.url}/api/datasources`, token, { datastoreId, type: 'text', name: `doc ${i}`, text: document(i) }, true, posting)));
  const queuedMs = performance.now() - t0;
  const refused = posts.filter((p) => p.status !== 200);
  if (refused.length) throw new Error(`${refused.length} POSTs refused, first: ${refused[0]!.status} ${JSON.stringify(refused[0]!.body)}`);
  let state = await remaining();
  while (state.busy > 0) {
    await new Promise((r) => setTimeout(r, 500));
    state = await remaining();
  }
  const doneMs = performance.now() - t0;
  ingesting = false;
  await readers;
  await cutProbe(); // ingesting

  log(`bench:queue — ${describeDatabase()}; ${DOCS} text documents of ~6 paragraphs POSTed at once, embeddings from the OpenAI-compatible test server in its own process;`);
  log(`${READERS} clients reading GET /api/agents/{id} one request after another (${READ_RATE ? `${READ_RATE} reads/s together at most` : 'each as soon as its last one ended'}), on the idle service first, then during the ingestion`);
  log('');
  log(
    table([
      ['GET /api/agents/{id} (ms)', 'reads', 'p50', 'p99', 'max'],
      ['idle service', String(idle.length), f1(pct(idle, 50)), f1(pct(idle, 99)), f1(Math.max(...idle))],
      [`while ${DOCS} documents are ingested`, String(busy.length), f1(pct(busy, 50)), f1(pct(busy, 99)), f1(Math.max(...busy))],
      ['during / idle', '', `${f2(pct(busy, 50) / pct(idle, 50))}x`, `${f2(pct(busy, 99) / pct(idle, 99))}x`, ''],
    ]),
  );
  log(`all ${DOCS} POSTs answered in ${f1(queuedMs / 1000)} s; ${DOCS - state.failed.length} synched, ${state.failed.length} not (first: ${state.failed[0]?.errorMessage ?? '-'}), after ${f1(doneMs / 1000)} s (${f1(DOCS / (doneMs / 1000))} documents/s)`);
  if (probeFile) printProbe(probePhases().slice(1));
  const p99 = pct(busy, 99);
  log(`target: every document synched: ${state.failed.length === 0 ? 'ok' : 'MISSED'}; agent read p99 during ingestion ${f1(p99)} ms <= ${TARGET_P99_MS} ms: ${p99 <= TARGET_P99_MS ? 'ok' : 'MISSED'}`);
} finally {
  ingesting = false;
  agent.destroy();
  posting.destroy();
  await app.stop();
  await model.stop();
  await database?.drop();
}

/** The service's own figures for the idle and the ingesting phase, side by side. */
function printProbe([idle, busy]: any[]) {
  if (!idle || !busy) return;
  log('');
  log('inside the service (bench/probe.ts), idle | while ingesting:');
  log(
    table([
      ['', 'idle', 'while ingesting'],
      ['GET /api/agents/{id}: reads, server time p50 / p99 ms', ...[idle, busy].map((p) => `${p.agentReads.count}, ${f1(p.agentReads.p50)} / ${f1(p.agentReads.p99)}`)],
      ['  reads that ran a statement, statements, ms in them', ...[idle, busy].map((p) => `${p.agentReads.withStatements}, ${p.agentReads.statements}, ${f1(p.agentReads.dbMs)}`)],
      ['event-loop delay p50 / p99 / max ms', ...[idle, busy].map((p) => `${f1(p.loopDelay.p50)} / ${f1(p.loopDelay.p99)} / ${f1(p.loopDelay.max)}`)],
      ['stalls >= 20 ms: count, total ms, of it in PGlite ms, longest', ...[idle, busy].map((p) => `${p.stalls.count}, ${f1(p.stalls.ms)}, ${f1(p.stalls.inDb)}, ${f1(p.stalls.max)}`)],
      ['PGlite statements: count, total ms, p99 / max ms', ...[idle, busy].map((p) => `${p.statements.count}, ${f1(p.statements.ms)}, ${f1(p.statements.p99)} / ${f1(p.statements.max)}`)],
      ['PGlite transactions: count, held total ms, p99 / max ms', ...[idle, busy].map((p) => `${p.transactions.count}, ${f1(p.transactions.ms)}, ${f1(p.transactions.p99)} / ${f1(p.transactions.max)}`)],
    ]),
  );
  if (busy.statements.count) {
    log('');
    log('PGlite statements while ingesting, by total time held on the event loop:');
    log(table([['statement (start)', 'count', 'total ms', 'max ms'], ...busy.statements.top.map((s: any) => [s.sql, String(s.count), f1(s.ms), f1(s.max)])]));
  }
}
