import 'reflect-metadata';
import { createApp, type App } from './app.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/orm.ts';
import { entities } from './entities.ts';
import { ensureVectorIndex } from './db/vector-index.ts';
import { createEventBus } from './events/bus.ts';
import { createSchema } from './graphql/schema.ts';
import { INGEST_QUEUE } from './ingestion/datasource.service.ts';
import { ingestQueueOptions, startIngestWorkers } from './ingestion/ingest.job.ts';
import { FORM_WEBHOOK_QUEUE } from './forms/form.service.ts';
import { RESYNC_QUEUE, RESYNC_QUEUE_OPTIONS, startResyncWorkers } from './ingestion/resync.schedules.ts';
import { formWebhookQueueOptions, startFormWebhookWorkers } from './forms/form-webhook.job.ts';
import { createLogger, type Logger } from './logger.ts';
import { createChatModel } from './providers/chat.ts';
import { capabilitySummary } from './universal/capabilities.ts';
import { createEmbedder } from './providers/embeddings.ts';
import { LocalStorage } from './providers/local-storage.ts';
import { createStorage } from './providers/create-storage.ts';
import { startQueue } from './queue/queue.ts';
import { REEMBED_QUEUE } from './datastores/model-change.ts';
import { reembedQueueOptions, startReembedWorkers } from './datastores/reembed.job.ts';
import { startStalledSweep } from './ingestion/problems.service.ts';
import { createServices, type Services } from './services.ts';
import { startMetricsServer } from './metrics/http.ts';
import { instrumentChat, instrumentEmbedder, instrumentQueue, watchDatabase } from './metrics/instrument.ts';
import { Metrics } from './metrics/metrics.ts';

export interface Running {
  config: Config;
  db: Database;
  services: Services;
  /** Null when ROLE=worker. */
  app: App | null;
  logger: Logger;
  port: number;
  stop(): Promise<void>;
  /** SIGTERM, before stop(): new requests get 503, work in flight gets SHUTDOWN_GRACE_MS to finish. */
  drain(): Promise<void>;
}

/**
 * One bootstrap for the server, the worker and the tests: database (migrated), event bus,
 * queue, providers, services, then the HTTP app (ROLE all|api) and the workers (ROLE all|worker).
 */
export interface StartOptions {
  logger?: Logger;
  /** openDatabase's `template` (tests) */
  pgliteTemplate?: Blob;
  /**
   * No chat model even when an endpoint is configured: answers are the extractive answerer's while
   * the endpoint may still serve the embeddings (`npm run eval` measures that answerer with them).
   */
  extractiveOnly?: boolean;
}

export async function start(config: Config, opts: StartOptions = {}): Promise<Running> {
  // Pretty lines for a person at a terminal in development; JSON lines for everything else.
  const logger = opts.logger ?? createLogger(config.logLevel, { pretty: config.logPretty ?? (config.env === 'development' && process.stderr.isTTY === true) });
  const db = await openDatabase(config.database, { entities, template: opts.pgliteTemplate });
  const cleanups: (() => Promise<void>)[] = [() => db.close()];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => logger.error('shutdown step failed', { error }));
    }
  };
  try {
    // One registry per started service: tests start several in one process.
    const metrics = config.metrics.enabled ? new Metrics({ logger }) : null;
    const embedder = instrumentEmbedder(createEmbedder(config, { logger }), metrics);
    await ensureVectorIndex(db.orm, embedder.dimension);
    const bus = createEventBus(config.database, db.pglite, logger);
    cleanups.push(() => bus.close());
    // One list: every queue started is also watched by the metrics.
    const queues = [
      { name: INGEST_QUEUE, options: ingestQueueOptions(config) },
      { name: FORM_WEBHOOK_QUEUE, options: formWebhookQueueOptions(config) },
      { name: REEMBED_QUEUE, options: reembedQueueOptions(config) },
      { name: RESYNC_QUEUE, options: RESYNC_QUEUE_OPTIONS },
    ];
    const queue = await startQueue(config.database, db.pglite, queues, logger, {
      superviseSeconds: config.jobs.superviseSeconds,
      stallSeconds: config.jobs.stallSeconds,
    });
    cleanups.push(() => queue.stop());
    instrumentQueue(queue, metrics);
    watchDatabase(metrics, { db, database: config.database, queue, queues: queues.map((q) => q.name) });
    const storage = createStorage(config);
    const services = await createServices(config, { bus, queue, storage, embedder, chat: opts.extractiveOnly ? null : instrumentChat(createChatModel(config, { logger }), metrics), logger, wrapEmbedder: (e) => instrumentEmbedder(e, metrics) });
    cleanups.push(() => services.limits.close(db.orm.em.fork()));

    if (config.role !== 'api') {
      await startIngestWorkers({ config, orm: db.orm, storage, queue, embedder, embedders: services.embedders, datasources: services.datasources, logger });
      await startReembedWorkers({ orm: db.orm, queue, embedders: services.embedders, logger });
      await startFormWebhookWorkers({ config, orm: db.orm, queue, logger });
      await startResyncWorkers({ orm: db.orm, queue, datasources: services.datasources, logger });
    }
    // Every process sweeps (a guarded write: several at once change a row once), workers or not.
    cleanups.push(startStalledSweep(services.problems, () => db.orm.em.fork(), config.stalledSweepSeconds, logger));
    let app: App | null = null;
    let port = 0;
    if (config.role !== 'worker') {
      // Which parts of the universal processor work here (ffmpeg, OCR, models), and why not.
      logger.info('universal processor', capabilitySummary(await services.universal.capabilities()));
      const schema = await createSchema();
      app = await createApp({ config, db, services, schema, logger, metrics });
      port = await app.listen();
      if (storage instanceof LocalStorage && /:0$/.test(config.publicUrl)) storage.setPublicUrl(`http://127.0.0.1:${port}`);
      const httpApp = app;
      cleanups.push(() => httpApp.close());
    }
    // METRICS_PORT: served by every role, so a worker-only process can be scraped too.
    if (metrics && config.metrics.port !== null) {
      const metricsServer = await startMetricsServer(metrics, { port: config.metrics.port, host: config.host, token: config.metrics.token });
      cleanups.push(() => metricsServer.close());
    }
    let stopping: Promise<void> | undefined;
    const drain = async () => {
      logger.info('draining', { graceMs: config.shutdownGraceMs });
      await Promise.all([app?.drain(config.shutdownGraceMs), queue.drain(config.shutdownGraceMs)]);
    };
    let draining: Promise<void> | undefined;
    return { config, db, services, app, logger, port, stop: () => (stopping ??= stop()), drain: () => (draining ??= drain()) };
  } catch (err) {
    await stop();
    throw err;
  }
}
