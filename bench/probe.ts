/**
 * Where a request waits, measured inside the service process (bench/serve-app.ts loads this when
 * BENCH_PROBE names a file). It records:
 *  - every statement the embedded database runs, with the time its WebAssembly call held the
 *    event loop (PGlite runs a statement synchronously on the main thread), grouped by its SQL;
 *  - how long each PGlite transaction held the one connection;
 *  - event-loop stalls (a 5 ms timer that fired late), and how much of each stall was spent inside
 *    PGlite statements, so what blocks the loop besides the database shows as the remainder;
 *  - for each GET /api/agents/{id}: its time from the `request` event to the last byte, and the
 *    statements it ran itself.
 * On SIGUSR2 the figures since the last SIGUSR2 are appended to the file as one JSON line and
 * reset, so a benchmark can cut its run into phases (bench/queue.ts: idle, then ingesting).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';

const out = process.env.BENCH_PROBE!;

interface Statement {
  count: number;
  ms: number;
  max: number;
}
interface ReadTrace {
  statements: number;
  dbMs: number;
}

const reads = new AsyncLocalStorage<ReadTrace>();
let statements = new Map<string, Statement>();
let statementMs: number[] = [];
let transactionMs: number[] = [];
let stalls: { ms: number; inDb: number }[] = [];
let agentReads: { ms: number; statements: number; dbMs: number }[] = [];
/** Milliseconds spent inside PGlite statements since the process started. */
let dbClock = 0;
let label = '?';

/** The SQL of a Parse ('P') or simple Query ('Q') message in a frontend protocol buffer. */
function sqlOf(message: Uint8Array): string | null {
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  for (let at = 0; at + 5 <= message.length; ) {
    const type = message[at]!;
    const length = view.getInt32(at + 1);
    if (type === 0x50 || type === 0x51) {
      let start = at + 5;
      if (type === 0x50) start = message.indexOf(0, start) + 1; // the statement's name first
      const end = message.indexOf(0, start);
      return Buffer.from(message.subarray(start, end)).toString('utf8');
    }
    at += 1 + length;
  }
  return null;
}

const short = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 70);

const proto = PGlite.prototype as unknown as { execProtocolRawSync(m: Uint8Array): Uint8Array; transaction(fn: (tx: unknown) => Promise<unknown>): Promise<unknown> };
const execSync = proto.execProtocolRawSync;
proto.execProtocolRawSync = function (this: unknown, message: Uint8Array) {
  const sql = sqlOf(message);
  if (sql !== null) label = short(sql);
  const t0 = performance.now();
  try {
    return execSync.call(this, message);
  } finally {
    const ms = performance.now() - t0;
    dbClock += ms;
    statementMs.push(ms);
    const s = statements.get(label) ?? { count: 0, ms: 0, max: 0 };
    s.count++;
    s.ms += ms;
    s.max = Math.max(s.max, ms);
    statements.set(label, s);
    const read = reads.getStore();
    if (read) {
      read.statements++;
      read.dbMs += ms;
    }
  }
};
const transaction = proto.transaction;
proto.transaction = function (this: unknown, fn) {
  return transaction.call(this, async (tx) => {
    const t0 = performance.now();
    try {
      return await fn(tx);
    } finally {
      transactionMs.push(performance.now() - t0);
    }
  });
};

const emit = http.Server.prototype.emit as (this: http.Server, event: string, ...args: unknown[]) => boolean;
http.Server.prototype.emit = function (this: http.Server, event: string, ...args: unknown[]) {
  if (event !== 'request') return emit.call(this, event, ...args);
  const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
  if (req.method !== 'GET' || !/^\/api\/agents\/[^/]+$/.test(req.url ?? '')) return emit.call(this, event, ...args);
  const trace: ReadTrace = { statements: 0, dbMs: 0 };
  const t0 = performance.now();
  res.once('finish', () => agentReads.push({ ms: performance.now() - t0, statements: trace.statements, dbMs: trace.dbMs }));
  return reads.run(trace, () => emit.call(this, event, ...args));
} as typeof http.Server.prototype.emit;

const TICK = 5;
let expected = performance.now() + TICK;
let dbAtTick = dbClock;
setInterval(() => {
  const now = performance.now();
  const late = now - expected;
  if (late >= 20) stalls.push({ ms: late, inDb: dbClock - dbAtTick });
  expected = now + TICK;
  dbAtTick = dbClock;
}, TICK).unref();

const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();

const pct = (xs: number[], p: number) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

process.on('SIGUSR2', () => {
  const top = [...statements.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12);
  appendFileSync(
    out,
    `${JSON.stringify({
      statements: { count: statementMs.length, ms: sum(statementMs), p99: pct(statementMs, 99), max: Math.max(0, ...statementMs), top: top.map(([sql, s]) => ({ sql, ...s })) },
      transactions: { count: transactionMs.length, ms: sum(transactionMs), p99: pct(transactionMs, 99), max: Math.max(0, ...transactionMs) },
      stalls: { count: stalls.length, ms: sum(stalls.map((s) => s.ms)), inDb: sum(stalls.map((s) => s.inDb)), max: Math.max(0, ...stalls.map((s) => s.ms)) },
      loopDelay: { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 },
      agentReads: {
        count: agentReads.length,
        p50: pct(agentReads.map((r) => r.ms), 50),
        p99: pct(agentReads.map((r) => r.ms), 99),
        withStatements: agentReads.filter((r) => r.statements > 0).length,
        statements: sum(agentReads.map((r) => r.statements)),
        dbMs: sum(agentReads.map((r) => r.dbMs)),
      },
    })}\n`,
  );
  statements = new Map();
  statementMs = [];
  transactionMs = [];
  stalls = [];
  agentReads = [];
  delay.reset();
});
