/**
 * Where the database time of bench:ingest goes, statement by statement (BENCH_TRACE=1).
 *
 * PostgreSQL: every copy of `pg` in node_modules (ours, MikroORM's, pg-boss's) has its
 * Client.prototype.query wrapped, so each statement's round trip is timed from the caller's side.
 * PGlite: the instance's execProtocolStream is wrapped; the SQL is read from the Parse / Query
 * protocol messages, and the engine time of the messages that follow (bind, execute, sync) is
 * charged to it. PGlite runs one message at a time on the main thread, so that sum is the time
 * the embedded database itself was busy.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { root } from './support.ts';

export interface StatementStats {
  sql: string;
  count: number;
  ms: number;
}

export interface Tracer {
  /** Counts only between start() and stop(). */
  start(): void;
  stop(): void;
  statements(): StatementStats[];
  /** Sum of the times of every statement (PGlite: the engine's busy time). */
  totalMs(): number;
}

const skip = new WeakSet<object>();
/** A client whose statements are never counted (the benchmark's own polling and baseline). */
export function untraced<T extends object>(client: T): T {
  skip.add(client);
  return client;
}

function key(sql: string): string {
  return sql
    .replace(/\s+/g, ' ')
    .replace(/\$\d+/g, '?')
    .replace(/'[^']*'/g, "'…'")
    .trim()
    .slice(0, 90);
}

function makeTracer(): Tracer & { record(sql: string, ms: number, statements?: number): void } {
  let on = false;
  const stats = new Map<string, StatementStats>();
  return {
    record(sql, ms, statements = 1) {
      if (!on) return;
      const k = key(sql);
      const s = stats.get(k) ?? { sql: k, count: 0, ms: 0 };
      s.count += statements;
      s.ms += ms;
      stats.set(k, s);
    },
    start: () => void (on = true),
    stop: () => void (on = false),
    statements: () => [...stats.values()].sort((a, b) => b.ms - a.ms),
    totalMs: () => [...stats.values()].reduce((n, s) => n + s.ms, 0),
  };
}

/** Call before the service starts: pools keep the Client class they were given, not the instances. */
export function tracePg(): Tracer {
  const tracer = makeTracer();
  const classes = new Set<any>();
  for (const from of ['.', 'node_modules/@mikro-orm/postgresql', 'node_modules/pg-boss']) {
    try {
      classes.add(createRequire(path.join(root, from, 'package.json'))('pg').Client);
    } catch {
      // that package is not installed here, or shares the top-level pg
    }
  }
  for (const Client of classes) {
    const query = Client.prototype.query;
    Client.prototype.query = function (this: object, ...args: any[]) {
      const text: unknown = typeof args[0] === 'string' ? args[0] : args[0]?.text;
      if (skip.has(this) || typeof text !== 'string') return query.apply(this, args);
      const t0 = performance.now();
      const done = () => tracer.record(text, performance.now() - t0);
      const cb = args.findIndex((a) => typeof a === 'function');
      if (cb >= 0) {
        const original = args[cb];
        args[cb] = (err: unknown, res: unknown) => {
          done();
          original(err, res);
        };
        return query.apply(this, args);
      }
      const result = query.apply(this, args);
      if (result && typeof result.then === 'function') result.then(done, done);
      return result;
    };
  }
  return tracer;
}

function cString(bytes: Uint8Array, at: number): [string, number] {
  const end = bytes.indexOf(0, at);
  return [Buffer.from(bytes.buffer, bytes.byteOffset + at, end - at).toString('utf8'), end + 1];
}

/** Call after the service started, on its instance. */
export function tracePglite(pglite: PGlite): Tracer {
  const tracer = makeTracer();
  const instance = pglite as unknown as { execProtocolStream: (message: Uint8Array, opts?: unknown) => Promise<unknown> };
  const exec = instance.execProtocolStream.bind(pglite);
  let current = '(none)';
  instance.execProtocolStream = async (message, opts) => {
    // A statement starts with Parse (extended protocol) or Query (simple); the Bind, Execute and
    // Sync messages that follow are charged to it.
    const starts = message[0] === 0x50 /* P */ || message[0] === 0x51; /* Q */
    if (message[0] === 0x50) current = cString(message, cString(message, 5)[1])[0];
    else if (message[0] === 0x51) current = cString(message, 5)[0];
    const sql = current;
    const t0 = performance.now();
    try {
      return await exec(message, opts);
    } finally {
      tracer.record(sql, performance.now() - t0, starts ? 1 : 0);
    }
  };
  return tracer;
}
