/**
 * Prometheus metrics (prom-client), one registry per started service: tests run several services
 * in one process, and prom-client's global default registry would mix their counts. Every metric
 * is declared here, with its labels, so the whole catalogue (docs/operations.md, "Metrics") can be
 * checked in one place. Labels only ever take values from a fixed set (route templates, schema
 * field names, queue names, configured model ids, error kinds): never an id, a raw path or
 * anything a client chose.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from '../logger.ts';

/** Seconds: from a cached REST read (~1 ms) to a long streamed answer. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds: a model's first token, an embedding batch. */
const MODEL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];
/** Seconds: a small text is ingested in a fraction of a second, a large site in minutes. */
const JOB_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export class Metrics {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by route template, method and status, from the first byte received until the response closed (a stream counts its whole life).',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });

  readonly openStreams = new Gauge({
    name: 'http_open_streams',
    help: 'Server-sent event streams open now (REST answers, /graphql/stream, /v1 and MCP streams), by route template.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  readonly graphqlOperations = new Counter({
    name: 'graphql_operations_total',
    help: 'GraphQL operations received on /graphql and /graphql/stream, by operation type and root field of the schema (one count per root field selected).',
    labelNames: ['type', 'field'] as const,
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'job_duration_seconds',
    help: 'Background job attempts by queue and outcome (completed, failed), from the worker taking the job to its end.',
    labelNames: ['queue', 'outcome'] as const,
    buckets: JOB_BUCKETS,
    registers: [this.registry],
  });

  readonly jobRetries = new Counter({
    name: 'job_retries_total',
    help: 'Job attempts that were retries of an earlier failed or abandoned attempt, by queue.',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });

  readonly embeddingCalls = new Counter({
    name: 'embedding_calls_total',
    help: 'Calls to the embedding model by provider (local, endpoint), kind (documents, query) and outcome (ok, error, cancelled).',
    labelNames: ['provider', 'kind', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly embeddingDuration = new Histogram({
    name: 'embedding_duration_seconds',
    help: 'Time an embedding call took, by provider and kind (a documents call covers all its batches).',
    labelNames: ['provider', 'kind'] as const,
    buckets: MODEL_BUCKETS,
    registers: [this.registry],
  });

  readonly embeddingTexts = new Counter({
    name: 'embedding_texts_total',
    help: 'Texts embedded, by provider.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  readonly modelCalls = new Counter({
    name: 'model_calls_total',
    help: 'Calls to the chat model endpoint by configured model id, mode (stream, complete) and outcome (ok, error, cancelled).',
    labelNames: ['model', 'mode', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly modelFirstToken = new Histogram({
    name: 'model_first_token_seconds',
    help: 'Time from sending a chat request to its first text (for a complete call, to the whole answer), by model and mode.',
    labelNames: ['model', 'mode'] as const,
    buckets: MODEL_BUCKETS,
    registers: [this.registry],
  });

  readonly modelErrors = new Counter({
    name: 'model_errors_total',
    help: 'Failed chat model calls by model and kind: timeout, network, rate_limited (429), http_4xx, http_5xx, other.',
    labelNames: ['model', 'kind'] as const,
    registers: [this.registry],
  });

  readonly modelTokens = new Counter({
    name: 'model_tokens_total',
    help: 'Tokens reported by the chat model endpoint, by model and direction (in = prompt, out = completion).',
    labelNames: ['model', 'direction'] as const,
    registers: [this.registry],
  });

  readonly logger?: Logger;

  /** `defaultMetrics`: prom-client's process and Node.js metrics (CPU, memory, event loop lag, GC…), on by default. */
  constructor(opts: { defaultMetrics?: boolean; logger?: Logger } = {}) {
    this.logger = opts.logger;
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** The text a Prometheus server scrapes. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /**
   * A gauge whose values are read when scraped (queue states, pool use): nothing to keep in
   * step between scrapes. A read that fails (the database is down) leaves the gauge empty for
   * that scrape rather than failing the whole scrape.
   */
  gaugeAtScrape<L extends string>(opts: { name: string; help: string; labelNames: readonly L[] }, read: () => Promise<{ labels: Partial<Record<L, string>>; value: number }[]>): void {
    const logger = this.logger;
    new Gauge<L>({
      ...opts,
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          for (const { labels, value } of await read()) this.set(labels, value);
        } catch (error) {
          logger?.warn('metrics: a value could not be read', { metric: opts.name, error });
        }
      },
    });
  }
}
