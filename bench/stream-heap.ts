/**
 * npm run bench:stream-heap — what the service keeps per streamed answer. Streams the same
 * questions as bench:stream's soak (public agent, no datastore, a new anonymous visitor and
 * conversation each), HEAP_CONCURRENCY (50) at a time: HEAP_STREAMS (1000) of them, then four
 * times as many; after each round, at rest, the service collects garbage and reports its memory
 * (bench/heap.ts). Prints heapUsed, external, arrayBuffers and RSS after each, and their growth per
 * stream between the two: a heap that grows after a full collection is something kept per answer;
 * a flat heap under a growing RSS is the allocator's or V8's sizing.
 *
 * HEAP_SNAPSHOT=1 also writes a heap snapshot after each round into a temporary directory (printed)
 * for `node --import @swc-node/register/esm-register bench/heap-diff.ts a b`. Embedded PGlite unless DATABASE_URL is set.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LIMITS_OFF, agent, describeDatabase, f1, f2, freshDatabase, graphql, pool, spawnChild, stream, table } from './lib.ts';
import { heapAfterGc } from './heap-sample.ts';

const N = Number(process.env.HEAP_STREAMS ?? 1000);
const CONCURRENCY = Number(process.env.HEAP_CONCURRENCY ?? 50);
const log = (s = '') => process.stdout.write(`${s}\n`);
const progress = (s: string) => process.stderr.write(`bench:stream-heap: ${s}\n`);

/** A streamed question: whether it ended with `data: [DONE]` and no [ERROR]. */
async function streamOnce(url: string, body: unknown): Promise<boolean> {
  const r = await stream(url, body, () => null);
  return r.status === 200 && r.done && !r.error;
}

const dir = mkdtempSync(path.join(tmpdir(), 'agentbase-heap-'));
const adminUrl = process.env.DATABASE_URL || '';
const database = adminUrl ? await freshDatabase(adminUrl, `agentbase_bench_heap_${process.pid}`) : null;
const model = await spawnChild('bench/openai-serve.ts', { FIRST_TOKEN_DELAY_MS: '20', TOKEN_DELAY_MS: '1', REPLY: 'A short streamed reply, a few tokens long, for the heap.' });
const app = await spawnChild('bench/serve-app.ts', {
  DATABASE_URL: database?.url ?? '',
  OPENAI_BASE_URL: model.url,
  OPENAI_API_KEY: 'bench',
  ...LIMITS_OFF,
  BENCH_HEAP: dir,
  BENCH_HEAP_SNAPSHOT: process.env.HEAP_SNAPSHOT === '1' ? '1' : '',
  BENCH_HEAP_SMAPS: process.env.HEAP_SMAPS === '1' ? '1' : '',
});

interface Sample {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
  snapshot: string | null;
}
/** The service's memory after a full collection (bench/heap.ts). */
function sample(): Promise<Sample> {
  return heapAfterGc<Sample>(dir, app.child.pid!);
}

let failed = 0;
try {
  const signUp = await graphql(app.url, `mutation { signUp(input: { email: "bench-heap@example.test", password: "bench-password", organizationName: "Bench" }) { token } }`);
  const created = await graphql(app.url, `mutation { createAgent(input: { name: "Bench", visibility: public }) { id } }`, {}, signUp.signUp.token);
  const url = `${app.url}/api/agents/${created.createAgent.id}/query`;
  let visitor = 0;
  const round = async (count: number) => {
    await pool(count, CONCURRENCY, async (i) => {
      if (!(await streamOnce(url, { query: `Heap question ${i}?`, streaming: true, visitorId: `heap-visitor-${visitor++}` }))) failed++;
    });
    await new Promise((r) => setTimeout(r, 1500)); // the answers' storing, after their last frame
  };
  progress(`warm-up (${CONCURRENCY * 4} streams)…`);
  await round(CONCURRENCY * 4);
  const s0 = await sample();
  progress(`${N} streams…`);
  await round(N);
  const s1 = await sample();
  progress(`${4 * N} more streams…`);
  await round(4 * N);
  const s5 = await sample();
  const mib = (b: number) => f1(b / 1048576);
  const per = (k: keyof Sample) => f2(((s5[k] as number) - (s1[k] as number)) / (4 * N) / 1024);
  log(`bench:stream-heap — ${describeDatabase()}; ${CONCURRENCY} streams at a time; memory after a forced full collection, at rest`);
  log(
    table([
      ['', 'heapUsed MiB', 'external MiB', 'arrayBuffers MiB', 'RSS MiB'],
      ['after warm-up', mib(s0.heapUsed), mib(s0.external), mib(s0.arrayBuffers), mib(s0.rss)],
      [`after ${N}`, mib(s1.heapUsed), mib(s1.external), mib(s1.arrayBuffers), mib(s1.rss)],
      [`after ${5 * N}`, mib(s5.heapUsed), mib(s5.external), mib(s5.arrayBuffers), mib(s5.rss)],
      [`KB per stream, ${N} → ${5 * N}`, per('heapUsed'), per('external'), per('arrayBuffers'), per('rss')],
    ]),
  );
  log(`failed streams: ${failed}`);
  if (s1.snapshot) log(`snapshots: ${s1.snapshot} ${s5.snapshot} (compare: node --import @swc-node/register/esm-register bench/heap-diff.ts ${s1.snapshot} ${s5.snapshot})`);
} finally {
  agent.destroy();
  await app.stop();
  await model.stop();
  await database?.drop();
}
