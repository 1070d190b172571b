/**
 * The service's memory after a full collection, for bench:heap (bench/serve-app.ts loads this when
 * BENCH_HEAP names a directory). On SIGUSR2 it collects garbage (twice: finalizers of the first
 * pass free more), appends `process.memoryUsage()` and the RSS as one JSON line to
 * `<dir>/memory.jsonl`, and with BENCH_HEAP_SNAPSHOT=1 also writes a heap snapshot
 * `<dir>/<n>.heapsnapshot` (Chrome's format) so two of them can be compared by constructor.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';

const dir = process.env.BENCH_HEAP!;
const snapshots = process.env.BENCH_HEAP_SNAPSHOT === '1';

// `gc` without starting the process with --expose-gc: the flag set now, the function taken from a new context.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

let n = 0;
process.on('SIGUSR2', () => {
  gc();
  gc();
  const m = { ...process.memoryUsage(), ...v8Spaces(), ...mappings() };
  if (process.env.BENCH_HEAP_SMAPS === '1') writeFileSync(path.join(dir, `${n}.smaps`), readFileSync('/proc/self/smaps'));
  const file = snapshots ? v8.writeHeapSnapshot(path.join(dir, `${n}.heapsnapshot`)) : null;
  appendFileSync(path.join(dir, 'memory.jsonl'), `${JSON.stringify({ n: n++, at: Date.now(), ...m, snapshot: file })}\n`);
});

/** Bytes V8 has committed per heap space (what heapTotal sums). */
function v8Spaces(): Record<string, number> {
  return Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [`v8:${s.space_name}`, s.physical_space_size]));
}

/**
 * Resident bytes by kind of mapping (/proc/self/smaps): the C heap ([heap], brk), anonymous
 * mappings (V8's pages, malloc's thread arenas, WebAssembly memory), files (code). Native memory
 * that grows outside V8 shows here and in no figure of process.memoryUsage().
 */
function mappings(): Record<string, number> {
  const out: Record<string, number> = {};
  let kind = '';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) kind = `map:${head[1] === '' ? 'anon' : head[1]!.startsWith('/') ? 'file' : head[1]}`;
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] = (out[kind] ?? 0) + Number(rss[1]) * 1024;
  }
  return out;
}
