/**
 * The bench's side of bench/heap.ts: asks the service (started with BENCH_HEAP=<dir>) for its
 * memory after a full collection, and waits for the line it appends.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The JSON line bench/heap.ts writes for one SIGUSR2 (process.memoryUsage(), V8 spaces, mappings, snapshot file). */
export async function heapAfterGc<T>(dir: string, pid: number): Promise<T> {
  const file = path.join(dir, 'memory.jsonl');
  const lines = () => {
    try {
      return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  const before = lines().length;
  process.kill(pid, 'SIGUSR2');
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    const all = lines();
    if (all.length > before) return JSON.parse(all.at(-1)!) as T;
  }
}
