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
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { startOpenAiTestServer } from '../test/support/openai-server.ts';
import { root } from './support.ts';

const SETTLE_MS = Number(process.env.SETTLE_MS ?? 30_000);
const RUNS = Number(process.env.RUNS ?? 3);
const PG_URL = process.env.BENCH_DATABASE_URL ?? '';

interface Launch {
  name: string;
  args: string[];
  env: Record<string, string>;
}

/** The start command exactly as package.json's `start` script has it. */
function startScript(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = pkg.scripts.start!.split(/\s+/);
  return words.slice(words.indexOf('node') + 1);
}

const NOW: Launch = { name: 'now', args: startScript(), env: {} };
const BEFORE: Launch = {
  name: 'before (swc-node loader, shared_buffers 128 MB)',
  args: ['--enable-source-maps', '--import', '@swc-node/register/esm-register', 'src/main.ts'],
  env: { PGLITE_SHARED_BUFFERS_MB: '128' },
};

interface Sample {
  rssMb: number;
  peakMb: number;
  startMs: number;
}

const mb = (kb: string) => Math.round(Number(kb) / 1024);

function memory(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (f: string) => mb(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(status)![1]!);
  return { rssMb: field('VmRSS'), peakMb: field('VmHWM') };
}

async function measure(launch: Launch, env: Record<string, string>): Promise<Sample> {
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
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        log += d.toString();
        if (log.includes('"msg":"listening"')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening:\n${log.slice(-2000)}`)));
    });
    const startMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return { ...memory(child.pid!), startMs };
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
  for (const configuration of configurations) {
    for (const launch of [BEFORE, NOW]) {
      const samples: Sample[] = [];
      // Alternating would be fairer on a busy machine, but one launcher's runs back to back share its page cache.
      for (let i = 0; i < RUNS; i++) samples.push(await measure(launch, configuration.env));
      process.stdout.write(
        `${configuration.name.padEnd(38)} ${launch.name.padEnd(48)} ${String(median(samples.map((s) => s.rssMb))).padStart(7)} ${String(median(samples.map((s) => s.peakMb))).padStart(8)} ${(median(samples.map((s) => s.startMs)) / 1000).toFixed(1).padStart(8)}\n`,
      );
    }
  }
  process.stdout.write(`load average after ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  await endpoint.close();
}

await main();
