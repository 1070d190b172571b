/**
 * The real service for a benchmark, on the embedded database in memory unless DATABASE_URL is set;
 * BENCH_PGLITE=disk: the embedded database in a data directory, as `npm start` makes it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { start } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';

// Where requests wait (bench/probe.ts), when a benchmark asks for it.
if (process.env.BENCH_PROBE) await import('./probe.ts');
// Memory after a full collection, and heap snapshots (bench/heap.ts), when a benchmark asks for them.
if (process.env.BENCH_HEAP) await import('./heap.ts');

const running = await start(
  loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'agentbase-bench-')),
    DATABASE_URL: process.env.DATABASE_URL || (process.env.BENCH_PGLITE === 'disk' ? undefined : 'pglite://memory'),
  }),
);
process.stdout.write(`LISTENING http://127.0.0.1:${running.port}\n`);
process.on('SIGTERM', () => void running.stop().then(() => process.exit(0)));
