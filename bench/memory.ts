/**
 * bench:memory: resident memory of the service after start-up, as `npm start` runs it, in each
 * configuration (embedded PGlite with an embedding endpoint, embedded with the local model,
 * PostgreSQL), each beside its baseline started in the same run: the launcher and PGlite
 * settings before issue 19 (@swc-node/register, shared_buffers 128 MB).
 *
 * For each: start, wait for the `listening` line, let it settle SETTLE_MS (the database's
 * compiled code tiers up in the first seconds), then read VmRSS (now) and VmHWM (peak since the
 * process began) from /proc.
 *
 *   npm run bench:memory
 *   BENCH_DATABASE_URL=postgres://… npm run bench:memory   (adds the PostgreSQL rows; the
 *     database given is migrated, use a scratch one)
 *   SETTLE_MS=30000 RUNS=3                                (defaults)
 *
 * Then, embedded with the endpoint, each launch once more with issue 19's corpus: 100 text files
 * of 100 paragraphs of 700-900 characters (10,000 chunks) uploaded 4 at a time as a user
 * uploads them, then CORPUS_QUERIES (500) datastore queries 4 at a time; the peak is the
 * highest resident memory from the first upload to the last answer (VmHWM reset by
 * /proc/<pid>/clear_refs, with 100 ms samples as a floor where that is refused).
 *   CORPUS_FILES=100 (0: no corpus phase) CORPUS_QUERIES=500; RUNS=0: the corpus phase only
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import type { TestApp } from '../test/support/app.ts';
import { newOrganization } from '../test/support/client.ts';
import { START_ARGS } from '../test/support/process.ts';
import { createDatastore, settled } from '../test/support/ingest.ts';
import { startOpenAiTestServer } from '../test/support/openai-server.ts';
import { root } from './support.ts';

const SETTLE_MS = Number(process.env.SETTLE_MS ?? 30_000);
const RUNS = Number(process.env.RUNS ?? 3);
const PG_URL = process.env.BENCH_DATABASE_URL ?? '';
const CORPUS_FILES = Number(process.env.CORPUS_FILES ?? 100);
const CORPUS_QUERIES = Number(process.env.CORPUS_QUERIES ?? 500);

interface Launch {
  name: string;
  args: string[];
  env: Record<string, string>;
}

const NOW: Launch = { name: 'now', args: START_ARGS, env: {} };
const BEFORE: Launch = {
  name: 'before (swc-node loader, shared_buffers 128 MB)',
  args: ['--enable-source-maps', '--import', '@swc-node/register/esm-register', 'src/main.ts'],
  env: { PGLITE_SHARED_BUFFERS_MB: '128' },
};

interface Sample {
  rssMb: number;
  peakMb: number;
  startMs: number;
  corpus?: Corpus;
}

interface Corpus {
  /** Highest resident memory from the first upload to the last answer. */
  peakMb: number;
  rssAfterMb: number;
  chunksPerSec: number;
  queryP50Ms: number;
}

const mb = (kb: string) => Math.round(Number(kb) / 1024);

function memory(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (f: string) => mb(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(status)![1]!);
  return { rssMb: field('VmRSS'), peakMb: field('VmHWM') };
}

/** 100 paragraphs of 700-900 characters (bench/ingest.ts's corpus of files), different for every file. */
function corpusFile(seed: number): string {
  let state = seed + 1;
  const rand = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const words = 'policy refund customer order parcel warehouse invoice account password support answer question delivery product price discount warranty repair battery screen keyboard office holiday meeting contract payment'.split(' ');
  const sentence = () => Array.from({ length: 12 }, () => words[Math.floor(rand() * words.length)]).join(' ') + '.';
  return Array.from({ length: 100 }, (_, p) => {
    const target = 700 + Math.floor(rand() * 201);
    let text = `Section ${seed}.${p}.`;
    while (text.length < target) text += ` ${sentence()}`;
    return text.slice(0, text.lastIndexOf(' ', target)) + '.';
  }).join('\n\n');
}

async function api(base: string, method: string, route: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}/api${route}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Uploads the corpus, waits for every file to be synched, queries it; the peak of resident memory throughout. */
async function corpus(pid: number, base: string): Promise<Corpus> {
  const org = await newOrganization(base, 'Bench memory');
  const app = { url: base, api: `${base}/api` } as TestApp;
  const store = await createDatastore(app, org.apiKey);
  let sampled = 0;
  const sampler = setInterval(() => (sampled = Math.max(sampled, memory(pid).rssMb)), 100);
  let reset = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
  } catch {
    reset = false;
  }
  const started = performance.now();
  const ids: string[] = [];
  const pool = async (count: number, job: (i: number) => Promise<void>) => {
    let next = 0;
    await Promise.all(Array.from({ length: 4 }, async () => { while (next < count) await job(next++); }));
  };
  await pool(CORPUS_FILES, async (i) => {
    const form = new FormData();
    form.set('type', 'file');
    form.set('datastoreId', store);
    form.set('file', new Blob([corpusFile(i)], { type: 'text/plain' }), `file ${i}.txt`);
    const res = await fetch(`${base}/api/datasources`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}` }, body: form });
    if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    ids.push(((await res.json()) as { id: string }).id);
  });
  for (const id of ids) {
    const { status } = await settled(app, org.apiKey, id, 3_600_000);
    if (status !== 'synched') throw new Error(`a corpus file ended ${status}`);
  }
  const chunksPerSec = (CORPUS_FILES * 100) / ((performance.now() - started) / 1000);
  const times: number[] = [];
  const terms = ['refund policy for a broken screen', 'warranty repair of the keyboard', 'parcel delivery to the warehouse', 'password of the support account', 'discount on the invoice price'];
  await pool(CORPUS_QUERIES, async (i) => {
    const t = performance.now();
    const answer = await api(base, 'POST', `/datastores/${store}/query`, org.apiKey, { query: `${terms[i % terms.length]} ${i}` });
    times.push(performance.now() - t);
    if (!JSON.stringify(answer).includes('Section')) throw new Error('a corpus query found nothing');
  });
  clearInterval(sampler);
  const now = memory(pid);
  return { peakMb: reset ? Math.max(now.peakMb, sampled) : sampled, rssAfterMb: now.rssMb, chunksPerSec, queryP50Ms: median(times) };
}

async function measure(launch: Launch, env: Record<string, string>, withCorpus = false): Promise<Sample> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-memory-'));
  const started = performance.now();
  // No shell and no npm in between: /proc must be node's own.
  const child = spawn(process.execPath, launch.args, {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, ...launch.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    let log = '';
    let base = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        log += d.toString();
        const line = log.split('\n').find((l) => l.includes('"msg":"listening"') && l.endsWith('}'));
        if (line && !base) {
          base = `http://127.0.0.1:${new URL((JSON.parse(line) as { url: string }).url).port}`;
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening:\n${log.slice(-2000)}`)));
    });
    const startMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const atRest = memory(child.pid!);
    return { ...atRest, startMs, ...(withCorpus ? { corpus: await corpus(child.pid!, base) } : {}) };
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const endpoint = await startOpenAiTestServer({ embeddingDimension: 384 });
  setInterval(() => (endpoint.requests.length = 0), 1000).unref();
  const withEndpoint = { OPENAI_BASE_URL: endpoint.url, EMBEDDING_MODEL: 'bench-embed', EMBEDDING_DIMENSION: '384' };
  const configurations: { name: string; env: Record<string, string> }[] = [
    { name: 'embedded PGlite + embedding endpoint', env: withEndpoint },
    { name: 'embedded PGlite + local model', env: {} },
  ];
  if (PG_URL) configurations.push({ name: 'PostgreSQL + embedding endpoint', env: { ...withEndpoint, DATABASE_URL: PG_URL } });

  process.stdout.write(`bench:memory  ${RUNS} run(s) each, settle ${SETTLE_MS} ms, load average before ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  process.stdout.write(`${'configuration'.padEnd(38)} ${'launch'.padEnd(48)} ${'RSS MB'.padStart(7)} ${'peak MB'.padStart(8)} ${'start s'.padStart(8)}\n`);
  for (const configuration of RUNS > 0 ? configurations : []) {
    for (const launch of [BEFORE, NOW]) {
      const samples: Sample[] = [];
      // Alternating would be fairer on a busy machine, but one launcher's runs back to back share its page cache.
      for (let i = 0; i < RUNS; i++) samples.push(await measure(launch, configuration.env));
      process.stdout.write(
        `${configuration.name.padEnd(38)} ${launch.name.padEnd(48)} ${String(median(samples.map((s) => s.rssMb))).padStart(7)} ${String(median(samples.map((s) => s.peakMb))).padStart(8)} ${(median(samples.map((s) => s.startMs)) / 1000).toFixed(1).padStart(8)}\n`,
      );
    }
  }
  if (CORPUS_FILES > 0) {
    process.stdout.write(`\nembedded PGlite + embedding endpoint, ${CORPUS_FILES} files x 100 paragraphs uploaded 4 at a time, then ${CORPUS_QUERIES} queries 4 at a time (one run each)\n`);
    process.stdout.write(`${'launch'.padEnd(48)} ${'peak MB'.padStart(8)} ${'RSS after'.padStart(10)} ${'chunks/s'.padStart(9)} ${'query p50 ms'.padStart(13)}  load\n`);
    for (const launch of [BEFORE, NOW]) {
      const { corpus: c } = await measure(launch, withEndpoint, true);
      process.stdout.write(
        `${launch.name.padEnd(48)} ${String(c!.peakMb).padStart(8)} ${String(c!.rssAfterMb).padStart(10)} ${c!.chunksPerSec.toFixed(0).padStart(9)} ${c!.queryP50Ms.toFixed(1).padStart(13)}  ${loadavg()[0]!.toFixed(2)}\n`,
      );
    }
  }
  process.stdout.write(`load average after ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  await endpoint.close();
}

await main();
