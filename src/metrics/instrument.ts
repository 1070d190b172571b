/**
 * The parts that call the outside world (the embedding model, the chat model) and the queue's
 * workers, wrapped once where the process builds them (boot.ts), so every caller is counted the
 * same way and none of them has to know about metrics.
 */
import type { Database } from '../db/orm.ts';
import { embeddedMemoryBytes } from '../db/pglite-memory.ts';
import type { DatabaseConfig } from '../config.ts';
import type { ChatChunk, ChatModel, ChatParams } from '../providers/chat.ts';
import type { Embedder } from '../providers/embeddings.ts';
import type { Queue } from '../queue/queue.ts';
import type { Metrics } from './metrics.ts';

const seconds = (started: number) => (performance.now() - started) / 1000;

/** The caller's signal ended the call: it left, or its own deadline passed. Not the model's failure. */
const cancelled = (signal?: AbortSignal) => signal?.aborted === true;

/** `metrics` null (METRICS_ENABLED=false): the embedder as it is. */
export function instrumentEmbedder(embedder: Embedder, metrics: Metrics | null): Embedder {
  if (!metrics) return embedder;
  const provider = embedder.provider === 'local' ? 'local' : 'endpoint';
  const timed = async <T>(kind: 'documents' | 'query', texts: number, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      const result = await call();
      metrics.embeddingCalls.inc({ provider, kind, outcome: 'ok' });
      metrics.embeddingDuration.observe({ provider, kind }, seconds(started));
      metrics.embeddingTexts.inc({ provider }, texts);
      return result;
    } catch (err) {
      metrics.embeddingCalls.inc({ provider, kind, outcome: cancelled(signal) ? 'cancelled' : 'error' });
      throw err;
    }
  };
  return {
    provider: embedder.provider,
    model: embedder.model,
    dimension: embedder.dimension,
    embedDocuments: (texts, signal) => (texts.length === 0 ? embedder.embedDocuments(texts, signal) : timed('documents', texts.length, signal, () => embedder.embedDocuments(texts, signal))),
    embedQuery: (text, signal) => timed('query', 1, signal, () => embedder.embedQuery(text, signal)),
  };
}

/** What went wrong with a model call, in a handful of kinds an alert can be written for. */
export function modelErrorKind(err: unknown): string {
  // chat.ts wraps the client's error; the client's own (status, name) is its cause.
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { status, code } = e as { status?: unknown; code?: unknown };
    // The openai client's error classes keep the generic name "Error"; their class says what they are.
    const name = (e as { name?: unknown }).name === 'Error' ? (e as object).constructor?.name : (e as { name?: unknown }).name;
    if (typeof status === 'number') return status === 429 ? 'rate_limited' : status >= 500 ? 'http_5xx' : status >= 400 ? 'http_4xx' : 'other';
    if (name === 'TimeoutError' || name === 'APIConnectionTimeoutError' || code === 'ETIMEDOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') return 'timeout';
    if (name === 'APIConnectionError' || code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EPIPE') return 'network';
  }
  return 'other';
}

/** No chat model configured, or metrics off: as it is. */
export function instrumentChat(chat: ChatModel | null, metrics: Metrics | null): ChatModel | null {
  if (!chat || !metrics) return chat;
  const failed = (params: ChatParams, mode: string, err: unknown, signal?: AbortSignal) => {
    if (cancelled(signal)) return void metrics.modelCalls.inc({ model: params.model, mode, outcome: 'cancelled' });
    metrics.modelCalls.inc({ model: params.model, mode, outcome: 'error' });
    metrics.modelErrors.inc({ model: params.model, kind: modelErrorKind(err) });
  };
  const tokens = (model: string, usage: { promptTokens: number; completionTokens: number } | null | undefined) => {
    if (!usage) return;
    if (usage.promptTokens > 0) metrics.modelTokens.inc({ model, direction: 'in' }, usage.promptTokens);
    if (usage.completionTokens > 0) metrics.modelTokens.inc({ model, direction: 'out' }, usage.completionTokens);
  };
  return {
    async *stream(turns, params, signal): AsyncGenerator<ChatChunk> {
      const { model } = params;
      const started = performance.now();
      let first = true;
      let ended = false;
      try {
        for await (const chunk of chat.stream(turns, params, signal)) {
          if (chunk.type === 'text' && first) {
            first = false;
            metrics.modelFirstToken.observe({ model, mode: 'stream' }, seconds(started));
          }
          if (chunk.type === 'usage') tokens(model, chunk.usage);
          yield chunk;
        }
        ended = true;
        metrics.modelCalls.inc({ model, mode: 'stream', outcome: 'ok' });
      } catch (err) {
        ended = true;
        failed(params, 'stream', err, signal);
        throw err;
      } finally {
        // The consumer stopped reading (the visitor left) before the model finished.
        if (!ended) metrics.modelCalls.inc({ model, mode: 'stream', outcome: 'cancelled' });
      }
    },
    async complete(turns, params, signal) {
      const started = performance.now();
      try {
        const result = await chat.complete(turns, params, signal);
        metrics.modelFirstToken.observe({ model: params.model, mode: 'complete' }, seconds(started));
        metrics.modelCalls.inc({ model: params.model, mode: 'complete', outcome: 'ok' });
        tokens(params.model, result.usage);
        return result;
      } catch (err) {
        failed(params, 'complete', err, signal);
        throw err;
      }
    },
  };
}

/**
 * Times every job attempt of every queue this process works, and counts the retries. Changed in
 * place: the services already hold this queue, and only `work` is measured.
 */
export function instrumentQueue(queue: Queue, metrics: Metrics | null): void {
  if (!metrics) return;
  const work = queue.work.bind(queue);
  queue.work = (name, options, handler) =>
    work(name, options, async (job) => {
      if (job.retryCount > 0) metrics.jobRetries.inc({ queue: name });
      const started = performance.now();
      try {
        await handler(job as never);
        metrics.jobDuration.observe({ queue: name, outcome: 'completed' }, seconds(started));
      } catch (err) {
        metrics.jobDuration.observe({ queue: name, outcome: 'failed' }, seconds(started));
        throw err;
      }
    });
}

const JOB_STATES = ['created', 'retry', 'active', 'completed', 'cancelled', 'failed'] as const;

/**
 * Jobs by queue and state, and the queue depth (waiting to run: created or retry), read from
 * pg-boss's table when scraped. pg-boss's own counts are refreshed only by its monitor pass; a
 * scrape wants now. Completed and failed jobs are counted while pg-boss retains them.
 */
function watchQueue(queue: Queue, names: readonly string[], metrics: Metrics): void {
  type Row = { name: string; state: string; n: number };
  // Both gauges are collected at once by one scrape: they share one query in flight.
  let inFlight: Promise<Row[]> | null = null;
  const counts = () =>
    (inFlight ??= queue.boss
      .getDb()
      .executeSql(`select name, state::text as state, count(*)::int as n from pgboss.job where name = any($1::text[]) group by name, state`, [names as string[]])
      .then(({ rows }) => rows as Row[])
      .finally(() => (inFlight = null)));
  metrics.gaugeAtScrape({ name: 'jobs', help: 'Background jobs by queue and pg-boss state (created, retry, active, completed, cancelled, failed), read at scrape time.', labelNames: ['queue', 'state'] }, async () => {
    const rows = await counts();
    // Every state of every queue, zeros included, so a dashboard's series never vanish.
    return names.flatMap((queue) => JOB_STATES.map((state) => ({ labels: { queue, state }, value: rows.find((r) => r.name === queue && r.state === state)?.n ?? 0 })));
  });
  metrics.gaugeAtScrape({ name: 'jobs_queued', help: 'Queue depth: jobs waiting for a worker (created or retry, including those deferred to later), by queue.', labelNames: ['queue'] }, async () => {
    const rows = await counts();
    return names.map((queue) => ({ labels: { queue }, value: rows.filter((r) => r.name === queue && (r.state === 'created' || r.state === 'retry')).reduce((sum, r) => sum + r.n, 0) }));
  });
}

/**
 * The PostgreSQL connection pool MikroORM queries through. The embedded PGlite has one
 * connection and no pool: nothing is reported there.
 */
function watchPool(db: Database, database: DatabaseConfig, metrics: Metrics): void {
  if (database.kind !== 'postgres') return;
  type PgPool = { totalCount: number; idleCount: number; waitingCount: number; options: { max?: number } };
  const pool = async () => (await db.orm.em.getConnection().getNativeClient()) as unknown as PgPool;
  metrics.gaugeAtScrape({ name: 'db_pool_connections', help: 'PostgreSQL pool connections by state: total (open), idle, waiting (queries waiting for a connection), max (the pool size).', labelNames: ['state'] }, async () => {
    const p = await pool();
    return [
      { labels: { state: 'total' }, value: p.totalCount },
      { labels: { state: 'idle' }, value: p.idleCount },
      { labels: { state: 'waiting' }, value: p.waitingCount },
      { labels: { state: 'max' }, value: p.options.max ?? 0 },
    ];
  });
}

/** The embedded database's WebAssembly memory, the part of the process's memory that is Postgres's. */
function watchEmbeddedMemory(db: Database, metrics: Metrics): void {
  const pglite = db.pglite;
  if (!pglite) return;
  metrics.gaugeAtScrape({ name: 'db_embedded_memory_bytes', help: "The embedded database's WebAssembly memory in bytes (Postgres's heap and shared_buffers); it grows and never shrinks.", labelNames: [] }, async () => [
    { labels: {}, value: embeddedMemoryBytes(pglite) },
  ]);
}

/** What is read from the database at scrape time: job states and queue depth, the pool, the embedded database's memory. */
export function watchDatabase(metrics: Metrics | null, parts: { db: Database; database: DatabaseConfig; queue: Queue; queues: readonly string[] }): void {
  if (!metrics) return;
  watchQueue(parts.queue, parts.queues, metrics);
  watchPool(parts.db, parts.database, metrics);
  watchEmbeddedMemory(parts.db, metrics);
}
