/** Helpers for benchmarks: servers run in child processes so the load generator never shares their event loop. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';

export const root = path.resolve(import.meta.dirname, '..');

export interface Child {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Spawns `node --import swc <script>` and waits for a line `LISTENING <url>` on stdout. */
export function spawnServer(script: string, env: Record<string, string> = {}): Promise<Child> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', script], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /LISTENING (\S+)/.exec(out);
      if (m) {
        resolve({
          url: m[1]!,
          child,
          stop: () => new Promise<void>((r) => { child.once('close', () => r()); child.kill('SIGTERM'); }),
        });
      }
    });
    child.once('close', (code) => reject(new Error(`${script} exited with ${code}: ${out}`)));
  });
}

export interface Load { requestsPerSec: number; p50: number; p99: number; errors: number; non2xx: number }

export async function load(url: string, opts: { connections?: number; duration?: number; headers?: Record<string, string> } = {}): Promise<Load> {
  const result = await autocannon({ url, connections: opts.connections ?? 50, duration: opts.duration ?? 10, headers: opts.headers });
  return {
    requestsPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}
