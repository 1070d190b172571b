/**
 * bench:memory: resident memory of the service as `npm start` runs it (no shell, no npm in
 * between: /proc is node's own), counting the process and every child process it has started,
 * each figure beside a baseline measured in the same run: the same bench against the code of
 * BASELINE_REF (by default the commit this branch left main at), extracted with `git archive`
 * into a temporary folder over the same node_modules and compiled ahead as `npm install` does.
 * The baseline shows what a change saved and, where nothing changed, the noise between two
 * launches of the same code.
 *
 * 1. At rest: start, wait for the `listening` line, let it settle SETTLE_MS (the database's
 *    compiled code tiers up in the first seconds), then read the resident memory now and
 *    VmHWM (peak since the process began). RUNS each (median).
 * 2. Issue 19's corpus, on each database: 100 text files of 100 paragraphs of 700-900
 *    characters (10,000 chunks) uploaded 4 at a time as multipart files, as a user uploads
 *    them, every one waited for until `synched`; then CORPUS_QUERIES REST datastore queries
 *    (k = 4) 4 at a time. The peak of each phase: resident memory sampled every 100 ms (the
 *    process and its children), with the kernel's VmHWM of the process (reset at the phase's
 *    start through /proc/<pid>/clear_refs) as a floor between samples. At the highest sample
 *    of /metrics (scraped every second) the parts: V8's heap, memory outside it (buffers,
 *    WebAssembly), and of that the embedded database's WebAssembly memory.
 *
 *   npm run bench:memory
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:55432/postgres npm run bench:memory
 *     (adds PostgreSQL: each launch gets a fresh database on that server, dropped after)
 *   SETTLE_MS=30000 RUNS=3 CORPUS_FILES=100 (0: no corpus phase) CORPUS_QUERIES=500
 *   RUNS=0: the corpus phase only; BASELINE_REF=<git ref>, or none (no baseline);
 *   DATABASES=postgres: PostgreSQL alone (with BENCH_DATABASE_URL)
 */
import { execFileSync, execSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { TestApp } from '../test/support/app.ts';
import { newOrganization } from '../test/support/client.ts';
import { createDatastore, settled } from '../test/support/ingest.ts';
import { startOpenAiTestServer } from '../test/support/openai-server.ts';
import { CORPUS_QUESTIONS, PARAGRAPHS_PER_FILE, paragraphFile } from '../test/support/paragraphs.ts';
import { statusKb, treeResidentMb, watchPeak } from '../test/support/resident.ts';
import { freshDatabase, pct, pool } from './lib.ts';
import { root } from './support.ts';

const SETTLE_MS = Number(process.env.SETTLE_MS ?? 30_000);
const RUNS = Number(process.env.RUNS ?? 3);
const PG_SERVER = process.env.BENCH_DATABASE_URL ?? '';
const CORPUS_FILES = Number(process.env.CORPUS_FILES ?? 100);
const CORPUS_QUERIES = Number(process.env.CORPUS_QUERIES ?? 500);
const BASELINE_REF = process.env.BASELINE_REF ?? 'merge-base';
const ONLY = process.env.DATABASES ?? 'both';

interface Launch {
  name: string;
  /** The checkout whose package.json `start` script and sources are run. */
  dir: string;
}

/** The node arguments of a checkout's `start` script. */
function startArgs(dir: string): string[] {
  const words = (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  return words.slice(words.indexOf('node') + 1);
}

/** The code of `ref` in a temporary folder, runnable as `npm start` runs this checkout. */
function checkout(ref: string): { launch: Launch; remove(): void } {
  const commit = execFileSync('git', ['rev-parse', '--short', ref], { cwd: root, encoding: 'utf8' }).trim();
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-memory-baseline-'));
  execSync(`git archive ${commit} | tar -x -C ${JSON.stringify(dir)}`, { cwd: root });
  symlinkSync(realpathSync(path.join(root, 'node_modules')), path.join(dir, 'node_modules'));
  // What `npm install`'s prepare does for `npm start` (the console's build is not needed here).
  if (existsSync(path.join(dir, 'src/cli/precompile.mjs'))) execFileSync(process.execPath, ['src/cli/precompile.mjs'], { cwd: dir, stdio: 'ignore' });
  return { launch: { name: `baseline ${commit}`, dir }, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const kbToMb = (kb: number) => Math.round(kb / 1024);

interface Parts {
  heapMb: number;
  outsideHeapMb: number;
  /** The embedded database's WebAssembly memory (absent on PostgreSQL, or in code without the gauge). */
  wasmMb: number | null;
}

async function parts(base: string): Promise<(Parts & { rssMb: number }) | null> {
  try {
    const text = await (await fetch(`${base}/metrics`)).text();
    const metric = (name: string) => {
      const m = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
      return m ? Math.round(Number(m[1]) / 2 ** 20) : null;
    };
    return { rssMb: metric('process_resident_memory_bytes') ?? 0, heapMb: metric('nodejs_heap_size_total_bytes') ?? 0, outsideHeapMb: metric('nodejs_external_memory_bytes') ?? 0, wasmMb: metric('db_embedded_memory_bytes') };
  } catch {
    return null;
  }
}

/** Watches a phase: its peak (test/support/resident.ts) and the parts at the highest scrape of /metrics. */
function watch(pid: number, base: string) {
  const peak = watchPeak(pid);
  let top: (Parts & { rssMb: number }) | null = null;
  let scraping = false;
  const scraper = setInterval(async () => {
    if (scraping) return;
    scraping = true;
    const p = await parts(base);
    if (p && (!top || p.rssMb > top.rssMb)) top = p;
    scraping = false;
  }, 1000);
  return {
    stop(): { peakMb: number; parts: Parts | null } {
      clearInterval(scraper);
      return { peakMb: peak.stop(), parts: top };
    },
  };
}

async function api(base: string, route: string, token: string, body: unknown): Promise<any> {
  const res = await fetch(`${base}/api${route}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${route} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

interface Phase {
  peakMb: number;
  parts: Parts | null;
}

interface Corpus {
  ingest: Phase & { chunksPerSec: number };
  query: Phase & { p50Ms: number };
  rssAfterMb: number;
}

/** Uploads the corpus, waits for every file to be synched, queries it; the peak of each phase. */
async function corpus(pid: number, base: string): Promise<Corpus> {
  const org = await newOrganization(base, 'Bench memory');
  const app = { url: base, api: `${base}/api` } as TestApp;
  const store = await createDatastore(app, org.apiKey);

  let watching = watch(pid, base);
  const started = performance.now();
  const ids: string[] = [];
  await pool(CORPUS_FILES, 4, async (i) => {
    const form = new FormData();
    form.set('type', 'file');
    form.set('datastoreId', store);
    form.set('file', new Blob([paragraphFile(i)], { type: 'text/plain' }), `file ${i}.txt`);
    const res = await fetch(`${base}/api/datasources`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}` }, body: form });
    if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    ids.push(((await res.json()) as { id: string }).id);
  });
  for (const id of ids) {
    const { status } = await settled(app, org.apiKey, id, 3_600_000);
    if (status !== 'synched') throw new Error(`a corpus file ended ${status}`);
  }
  const chunksPerSec = (CORPUS_FILES * PARAGRAPHS_PER_FILE) / ((performance.now() - started) / 1000);
  const ingest = { ...watching.stop(), chunksPerSec };

  watching = watch(pid, base);
  const times: number[] = [];
  await pool(CORPUS_QUERIES, 4, async (i) => {
    const t = performance.now();
    const answer = await api(base, `/datastores/${store}/query`, org.apiKey, { query: `${CORPUS_QUESTIONS[i % CORPUS_QUESTIONS.length]} ${i}`, topK: 4 });
    times.push(performance.now() - t);
    if (!JSON.stringify(answer).includes('Section')) throw new Error('a corpus query found nothing');
  });
  const query = { ...watching.stop(), p50Ms: pct(times, 50) };
  return { ingest, query, rssAfterMb: treeResidentMb(pid) };
}

interface Sample {
  rssMb: number;
  peakMb: number;
  startMs: number;
  parts: Parts | null;
  corpus?: Corpus;
}

async function measure(launch: Launch, env: Record<string, string>, withCorpus = false): Promise<Sample> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-memory-'));
  const database = env.DATABASE_URL ? await freshDatabase(env.DATABASE_URL, `bench_memory_${process.pid}_${Math.random().toString(36).slice(2, 8)}`) : null;
  const started = performance.now();
  const child = spawn(process.execPath, startArgs(launch.dir), {
    cwd: launch.dir,
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, ...env, ...(database ? { DATABASE_URL: database.url } : {}) },
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
    const atRest = { rssMb: treeResidentMb(child.pid!), peakMb: kbToMb(statusKb(child.pid!, 'VmHWM')), startMs, parts: await parts(base) };
    return { ...atRest, ...(withCorpus ? { corpus: await corpus(child.pid!, base) } : {}) };
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
    await database?.drop();
  }
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const out = (line: string) => process.stdout.write(`${line}\n`);
const partsText = (p: Parts | null) => (p ? `${p.heapMb}/${p.outsideHeapMb}/${p.wasmMb ?? '-'}` : '-');

async function main() {
  const endpoint = await startOpenAiTestServer({ embeddingDimension: 384 });
  setInterval(() => (endpoint.requests.length = 0), 1000).unref();
  const withEndpoint = { OPENAI_BASE_URL: endpoint.url, OPENAI_API_KEY: 'bench', EMBEDDING_MODEL: 'bench-embed', EMBEDDING_DIMENSION: '384' };
  const databases: { name: string; env: Record<string, string> }[] = [{ name: 'embedded PGlite + embedding endpoint', env: withEndpoint }];
  if (PG_SERVER) databases.push({ name: 'PostgreSQL + embedding endpoint', env: { ...withEndpoint, DATABASE_URL: PG_SERVER } });
  if (ONLY === 'postgres') databases.shift();
  const configurations = ONLY === 'postgres' ? databases : [databases[0]!, { name: 'embedded PGlite + local model', env: {} }, ...databases.slice(1)];

  const now: Launch = { name: `now ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim()}${execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).trim() ? '+edits' : ''}`, dir: root };
  const ref = BASELINE_REF === 'merge-base' ? execFileSync('git', ['merge-base', 'HEAD', 'main'], { cwd: root, encoding: 'utf8' }).trim() : BASELINE_REF;
  const baseline = ref === 'none' ? null : checkout(ref);
  const launches = baseline ? [baseline.launch, now] : [now];

  try {
    out(`bench:memory  ${RUNS} run(s) each, settle ${SETTLE_MS} ms, load average before ${load()}`);
    out('RSS: the process and its children; parts (from /metrics): V8 heap / outside the heap / of that the embedded database, MB');
    if (RUNS > 0) out(`${'configuration'.padEnd(38)} ${'launch'.padEnd(22)} ${'RSS MB'.padStart(7)} ${'peak MB'.padStart(8)} ${'start s'.padStart(8)}  parts`);
    for (const configuration of RUNS > 0 ? configurations : []) {
      for (const launch of launches) {
        const samples: Sample[] = [];
        for (let i = 0; i < RUNS; i++) samples.push(await measure(launch, configuration.env));
        const mid = [...samples].sort((a, b) => a.rssMb - b.rssMb)[Math.floor(samples.length / 2)]!;
        out(`${configuration.name.padEnd(38)} ${launch.name.padEnd(22)} ${String(mid.rssMb).padStart(7)} ${String(pct(samples.map((s) => s.peakMb), 50)).padStart(8)} ${(pct(samples.map((s) => s.startMs), 50) / 1000).toFixed(1).padStart(8)}  ${partsText(mid.parts)}  (load ${loadavg()[0]!.toFixed(2)})`);
      }
    }
    if (CORPUS_FILES > 0) {
      out(`\n${CORPUS_FILES} files x 100 paragraphs uploaded 4 at a time, then ${CORPUS_QUERIES} queries (k = 4) 4 at a time; one run each; peaks in MB`);
      out(`${'database'.padEnd(38)} ${'launch'.padEnd(22)} ${'at rest'.padStart(7)} ${'ingest peak'.padStart(11)} ${'query peak'.padStart(10)} ${'after'.padStart(6)} ${'chunks/s'.padStart(8)} ${'p50 ms'.padStart(7)}  parts at the ingest / query peak`);
      for (const database of databases) {
        for (const launch of launches) {
          const s = await measure(launch, database.env, true);
          const c = s.corpus!;
          out(
            `${database.name.padEnd(38)} ${launch.name.padEnd(22)} ${String(s.rssMb).padStart(7)} ${String(c.ingest.peakMb).padStart(11)} ${String(c.query.peakMb).padStart(10)} ${String(c.rssAfterMb).padStart(6)} ${c.ingest.chunksPerSec.toFixed(0).padStart(8)} ${c.query.p50Ms.toFixed(1).padStart(7)}  ${partsText(c.ingest.parts)} / ${partsText(c.query.parts)}  (load ${loadavg()[0]!.toFixed(2)})`,
          );
        }
      }
    }
    out(`load average after ${load()}`);
  } finally {
    baseline?.remove();
    await endpoint.close();
  }
}

await main();
