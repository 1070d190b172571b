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
import { formWebhookQueueOptions, startFormWebhookWorkers } from './forms/form-webhook.job.ts';
import { createLogger, type Logger } from './logger.ts';
import { createChatModel } from './providers/chat.ts';
import { capabilitySummary } from './universal/capabilities.ts';
import { createEmbedder } from './providers/embeddings.ts';
import { LocalStorage } from './providers/local-storage.ts';
import { createStorage } from './providers/create-storage.ts';
import { startQueue } from './queue/queue.ts';
import { startStalledSweep } from './ingestion/problems.service.ts';
import { createServices, type Services } from './services.ts';

export interface Running {
  config: Config;
  db: Database;
  services: Services;
  /** Null when ROLE=worker. */
  app: App | null;
  logger: Logger;
  port: number;
  stop(): Promise<void>;
}

/**
 * One bootstrap for the server, the worker and the tests: database (migrated), event bus,
 * queue, providers, services, then the HTTP app (ROLE all|api) and the workers (ROLE all|worker).
 */
export async function start(config: Config, opts: { logger?: Logger } = {}): Promise<Running> {
  // Pretty lines for a person at a terminal in development; JSON lines for everything else.
  const logger = opts.logger ?? createLogger(config.logLevel, { pretty: config.logPretty ?? (config.env === 'development' && process.stderr.isTTY === true) });
  const db = await openDatabase(config.database, { entities });
  const cleanups: (() => Promise<void>)[] = [() => db.close()];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => logger.error('shutdown step failed', { error }));
    }
  };
  try {
    const embedder = createEmbedder(config, { logger });
    await ensureVectorIndex(db.orm, embedder.dimension);
    const bus = createEventBus(config.database, db.pglite, logger);
    cleanups.push(() => bus.close());
    const queue = await startQueue(config.database, db.pglite, [{ name: INGEST_QUEUE, options: ingestQueueOptions(config) }, { name: FORM_WEBHOOK_QUEUE, options: formWebhookQueueOptions(config) }], logger, {
      superviseSeconds: config.jobs.superviseSeconds,
    });
    cleanups.push(() => queue.stop());
    const storage = createStorage(config);
    const services = await createServices(config, { bus, queue, storage, embedder, chat: createChatModel(config, { logger }), logger });
    cleanups.push(() => services.limits.close(db.orm.em.fork()));

    if (config.role !== 'api') {
      await startIngestWorkers({ config, orm: db.orm, storage, queue, embedder, datasources: services.datasources, logger });
      await startFormWebhookWorkers({ config, orm: db.orm, queue, logger });
    }
    // Every process sweeps (a guarded write: several at once change a row once), workers or not.
    cleanups.push(startStalledSweep(services.problems, () => db.orm.em.fork(), config.stalledSweepSeconds, logger));
    let app: App | null = null;
    let port = 0;
    if (config.role !== 'worker') {
      // Which parts of the universal processor work here (ffmpeg, OCR, models), and why not.
      logger.info('universal processor', capabilitySummary(await services.universal.capabilities()));
      const schema = await createSchema();
      app = await createApp({ config, db, services, schema, logger });
      port = await app.listen();
      if (storage instanceof LocalStorage && /:0$/.test(config.publicUrl)) storage.setPublicUrl(`http://127.0.0.1:${port}`);
      const httpApp = app;
      cleanups.push(() => httpApp.close());
    }
    let stopping: Promise<void> | undefined;
    return { config, db, services, app, logger, port, stop: () => (stopping ??= stop()) };
  } catch (err) {
    await stop();
    throw err;
  }
}
