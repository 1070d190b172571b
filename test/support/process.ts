/**
 * Processes of the service as `npm start` / `npm run worker` run them, for tests that need
 * several (API and worker apart, a worker killed mid-job, more than one API process). Every
 * process started here is killed when `killAll` runs (call it in afterAll).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { waitFor } from './wait.ts';

export const root = path.resolve(import.meta.dirname, '..', '..');
/** The Node of the devDependency, as the npm scripts use it. */
export const NODE = path.join(root, 'node_modules', '.bin', 'node');

const children = new Set<ChildProcess>();
const groups = new Set<ChildProcess>();

export interface ServiceProcess {
  child: ChildProcess;
  /** Every JSON log line the process wrote to stderr so far. */
  logs: () => Record<string, any>[];
  waitForLog(msg: string, ms?: number): Promise<Record<string, any>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Signals a process, or its whole group (npm, its shell and node) when it was started as one. */
export function signal(child: ChildProcess, sig: NodeJS.Signals) {
  try {
    if (groups.has(child)) process.kill(-child.pid!, sig);
    else child.kill(sig);
  } catch {
    /* already gone */
  }
}

/** Whether any process of the group started with `child` is still alive. */
export const groupAlive = (child: ChildProcess) => {
  try {
    process.kill(-child.pid!, 0);
    return true;
  } catch {
    return false;
  }
};

/** Kills every process started by this module (SIGKILL). */
export function killAll() {
  for (const child of children) signal(child, 'SIGKILL');
}

export function spawnService(command: string, args: string[], env: Record<string, string>, opts: { group?: boolean } = {}): ServiceProcess {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', HOST: '127.0.0.1', ...env },
    detached: opts.group ?? false,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  if (opts.group) groups.add(child);
  let buffer = '';
  const lines: Record<string, any>[] = [];
  child.stdout!.resume();
  child.stderr!.on('data', (d: Buffer) => {
    buffer += d.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        lines.push(JSON.parse(line));
      } catch {
        lines.push({ msg: '(not json)', line });
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  exited.then(() => children.delete(child));
  return {
    child,
    logs: () => lines,
    exited,
    waitForLog: (msg, ms = 30_000) =>
      Promise.race([
        waitFor(async () => lines.find((l) => l.msg === msg), ms, `log "${msg}"`),
        exited.then(({ code, signal }) => {
          throw new Error(`process exited (${code ?? signal}) before logging "${msg}": ${JSON.stringify(lines)}`);
        }),
      ]),
  };
}

/** What a script printed and how it ended. */
export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run --silent <script> -- <args>` as a user runs it, with these variables added; killed after `timeoutMs`. */
export function runScript(script: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', script, '--', ...args], { cwd: root, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The arguments of `node` in package.json's start script (`npm run worker` is the same with
 * ROLE=worker): the TypeScript hooks that run in the main thread (src/cli/typescript-hooks.mjs),
 * not @swc-node/register, whose loader thread doubles a process's start-up CPU (~3 s against ~6 s).
 */
export const START_ARGS = (() => {
  const words = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  return words.slice(words.indexOf('node') + 1);
})();

/** The V8 heap flags of package.json's `start` script, for benchmarks that start the service another way (bench/serve-app.ts). */
export const START_V8_FLAGS = START_ARGS.filter((a) => /^--(max-semi-space-size|heap-growing-percent)=/.test(a));

/** `node src/main.ts`, exactly as the npm scripts run it. */
export const spawnMain = (env: Record<string, string>) => spawnService(NODE, START_ARGS, env);

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

export const connects = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
