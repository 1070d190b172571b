/** Helpers for bench:query and bench:stream (bench/support.ts holds those of bench:rest). */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { adminQuery, databaseUrl } from '../test/support/pg-admin.ts';
import { root } from './support.ts';

export interface Spawned {
  /** Every `KEY value` line the child printed before LISTENING (LISTENING included). */
  lines: Record<string, string>;
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Spawns `node --import swc <script> [args]` (the same Node as this process) and waits for
 * `LISTENING <url>` on stdout; other `UPPERCASE value` lines before it are returned too.
 */
export function spawnChild(script: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, '--import', '@swc-node/register/esm-register', script], {
      cwd: root,
      // As deployed: graphql-js, among others, reads NODE_ENV when it loads (its development mode adds checks to every instanceof).
      env: { ...process.env, NODE_ENV: 'production', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let done = false;
    child.stdout!.on('data', (d) => {
      out += d;
      if (done) return;
      const lines: Record<string, string> = {};
      for (const m of out.matchAll(/^([A-Z_]+) (\S+)$/gm)) lines[m[1]!] = m[2]!;
      if (lines.LISTENING) {
        done = true;
        resolve({
          lines,
          url: lines.LISTENING,
          child,
          stop: () =>
            new Promise<void>((r) => {
              if (child.exitCode !== null) return r();
              // A server that does not stop within 5 s is killed: a benchmark must not leave it behind.
              const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
              child.once('close', () => {
                clearTimeout(kill);
                r();
              });
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('close', (code) => {
      if (!done) reject(new Error(`${script} exited with ${code}: ${out}`));
    });
  });
}

/** The service's limits lifted for a load bench: the streams all come from one address and one organization. */
export const LIMITS_OFF = { RATE_LIMIT_IP_PER_MINUTE: '1000000', RATE_LIMIT_VISITOR_PER_MINUTE: '100000', DEFAULT_MONTHLY_QUERY_LIMIT: '100000000' } as const;

/** Keep-alive sockets without a cap, like a load generator's. */
export const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

export interface JsonResponse<T = any> {
  status: number;
  body: T;
  /** Milliseconds from sending the request to the last byte of the answer. */
  ms: number;
}

/** POST JSON over node:http (lighter than fetch, so the client adds little to the figures). */
export function postJson<T = any>(url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse<T>> {
  const data = Buffer.from(JSON.stringify(body));
  const attempt = (retry: boolean): Promise<JsonResponse<T>> =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': data.length, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - t0;
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON: keep the text */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed as T, ms });
        });
        res.on('error', reject);
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed while idle (after a long seed): send again, once.
        if (retry && req.reusedSocket && err.code === 'ECONNRESET') resolve(attempt(false));
        else reject(err);
      });
      req.end(data);
    });
  return attempt(true);
}

export async function graphql<T = any>(url: string, query: string, variables: Record<string, unknown> = {}, token?: string): Promise<T> {
  const res = await postJson(`${url}/graphql`, { query, variables }, token ? { authorization: `Bearer ${token}` } : {});
  if (res.status !== 200 || res.body.errors) throw new Error(`GraphQL ${res.status}: ${JSON.stringify(res.body.errors ?? res.body)}`);
  return res.body.data as T;
}

/** Nearest-rank percentile. */
export function pct(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
export const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

/** A plain text table: first row = header; numbers right-aligned. */
export function table(rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map(String));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

/** Runs `count` jobs with at most `concurrency` at a time, in order of index. */
export async function pool(count: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

/**
 * A fresh database on the PostgreSQL server of `url` for one benchmark run, dropped by
 * `drop()`: the benchmark rebuilds the HNSW index, which must not disturb other users.
 */
export async function freshDatabase(url: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  await adminQuery(url, `drop database if exists ${name} with (force)`);
  await adminQuery(url, `create database ${name}`);
  return { url: databaseUrl(url, name), drop: async () => void (await adminQuery(url, `drop database if exists ${name} with (force)`)) };
}

/** A named database on `url`'s server, created when missing and kept (BENCH_DATABASE). */
export async function keptDatabase(url: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (!(await adminQuery(url, 'select 1 from pg_database where datname = $1', [name])).length) await adminQuery(url, `create database ${name}`);
  return { url: databaseUrl(url, name), drop: async () => {} };
}

/** The datastore name of a seeded bench:query corpus: a kept database is reused only for the same one. */
export function corpusName(spec: { chunks: number; datasources: number; clusters: number; queries: number; seed: number }): string {
  return `Bench ${spec.chunks} chunks, ${spec.datasources} datasources, ${spec.clusters} clusters, ${spec.queries} queries, seed ${spec.seed}`;
}

export function describeDatabase(): string {
  const url = process.env.DATABASE_URL;
  if (!url) return process.env.BENCH_PGLITE === 'disk' ? 'embedded PGlite (a data directory on disk, as npm start has it, in the server process)' : 'embedded PGlite (in memory, in the server process)';
  const u = new URL(url);
  return `PostgreSQL at ${u.hostname}:${u.port || 5432}`;
}

export interface StreamResult {
  status: number;
  /** ms from sending the request to the chunk holding the first answer frame / content token. */
  first: number;
  /** ms to the end of the response. */
  total: number;
  done: boolean;
  error: string | null;
  text: string;
}

/**
 * POSTs and reads server-sent events with a standard parser (bench:stream, bench:stream-heap).
 * `pick` returns the text an event contributes to the answer, or null when it carries none.
 */
export function stream(url: string, body: unknown, pick: (e: EventSourceMessage) => string | null, headers: Record<string, string> = {}, retry = true): Promise<StreamResult> {
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const t0 = performance.now();
    const out: StreamResult = { status: 0, first: NaN, total: NaN, done: false, error: null, text: '' };
    const finish = () => {
      out.total = performance.now() - t0;
      resolve(out);
    };
    const parser = createParser({
      onEvent(e) {
        if (e.data === '[DONE]') out.done = true;
        else if (e.data.startsWith('[ERROR]')) out.error = e.data;
        else {
          const text = pick(e);
          if (text) {
            if (out.text === '') out.first = performance.now() - t0;
            out.text += text;
          }
        }
      },
    });
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': data.length, ...headers } },
      (res) => {
        out.status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (out.status === 200 ? parser.feed(chunk) : (out.error = (out.error ?? '') + chunk)));
        res.on('end', finish);
        res.on('error', (err) => {
          out.error = String(err);
          finish();
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A kept-alive socket the server closed while idle: send again, once (nothing was received).
      if (retry && req.reusedSocket && err.code === 'ECONNRESET' && out.status === 0) return resolve(stream(url, body, pick, headers, false));
      out.error = String(err);
      finish();
    });
    req.end(data);
  });
}

/** The kernel's clock ticks per second (/proc's CPU times count them), asked once: a process is spawned for it. */
let clockTicks: number | undefined;

/** User and system CPU time a process has used, in ms, from the kernel. */
export function cpuMs(pid: number): number {
  // The fields after the command's name (which may hold spaces), from the state on: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** The chat request bench:stream's model server is sent directly and by the floor (bench/bare-proxy.ts): what the app sends, roughly, a system and a user turn, streamed, usage requested. */
export function chatRequest(query: string) {
  return {
    model: 'gpt-4o-mini',
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
    messages: [
      { role: 'system', content: 'You are a helpful assistant. Answer from the context.' },
      { role: 'user', content: query },
    ],
  };
}
