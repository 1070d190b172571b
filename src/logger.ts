/**
 * The service's log, backed by pino: one JSON line per event (or pretty lines on a terminal in
 * development). Call sites keep a small interface (`logger.info(msg, fields)`) so none of them
 * knows pino. Lines written while a request is served carry its `requestId`, from the async
 * context the HTTP layer opens (`withLogContext`), without being handed a logger per request.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import pino, { type DestinationStream } from 'pino';
import pretty from 'pino-pretty';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface LogContext {
  requestId: string;
}

const context = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `ctx` attached to every line logged inside it, however deep and however late. */
export function withLogContext<T>(ctx: LogContext, fn: () => T): T {
  return context.run(ctx, fn);
}

/** The id of the request being served here, if any. */
export function currentRequestId(): string | undefined {
  return context.getStore()?.requestId;
}

/**
 * Secrets never reach the log, wherever a caller puts them: headers, bodies, fields.
 * pino's paths are exact (one `*` = one level), hence the three depths.
 */
const SECRET_KEYS = ['authorization', 'cookie', 'set-cookie', 'password', 'newPassword', 'apiKey', 'token', 'secret', 'signingSecret', 'x-api-key'];
const REDACT_PATHS = SECRET_KEYS.flatMap((k) => {
  const p = /^[A-Za-z_$][\w$]*$/.test(k) ? k : `["${k}"]`;
  const dot = p.startsWith('[') ? '' : '.';
  return [p, `*${dot}${p}`, `*.*${dot}${p}`];
});

export interface LoggerOptions {
  /** Human-readable lines (pino-pretty) instead of JSON. */
  pretty?: boolean;
  /** Where lines go; stderr by default (stdout stays free for commands' own output). */
  destination?: DestinationStream;
}

export function createLogger(level: LogLevel, opts: LoggerOptions = {}): Logger {
  const destination = opts.destination ?? (opts.pretty ? pretty({ destination: 2, sync: true, colorize: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l' }) : pino.destination({ dest: 2, sync: true }));
  const base = pino(
    {
      level,
      base: null, // pid and hostname say nothing in a one-process log
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      mixin: () => context.getStore() ?? {},
    },
    destination,
  );
  return wrap(base);
}

function wrap(log: pino.Logger): Logger {
  const write = (lvl: 'debug' | 'info' | 'warn' | 'error') => (msg: string, fields?: Record<string, unknown>) => {
    if (!log.isLevelEnabled(lvl)) return;
    if (fields) log[lvl](serializeErrors(fields), msg);
    else log[lvl](msg);
  };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
  };
}

/** Call sites pass errors under any key (`error`, `cause`…): each keeps its type, message and stack. */
function serializeErrors(fields: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Error) (out ??= { ...fields })[k] = pino.stdSerializers.err(v);
  }
  return out ?? fields;
}
