import 'reflect-metadata';
import { createApp, type App } from './app.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/orm.ts';
import { createEventBus } from './events/bus.ts';
import { createSchema } from './graphql/schema.ts';
import { createLogger, type Logger } from './logger.ts';
import { createServices, type Services } from './services.ts';

export interface Running {
  config: Config;
  db: Database;
  services: Services;
  app: App;
  logger: Logger;
  port: number;
  stop(): Promise<void>;
}

/** One bootstrap for the server and the tests: database (migrated), services, schema, HTTP. */
export async function start(config: Config, opts: { logger?: Logger } = {}): Promise<Running> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const db = await openDatabase(config.database);
  try {
    const bus = createEventBus(config.database, db.pglite, logger);
    const services = await createServices(config, bus);
    const schema = await createSchema();
    const app = await createApp({ config, db, services, schema, logger });
    const port = await app.listen();
    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        await app.close();
        await services.bus.close();
        await db.close();
      })());
    return { config, db, services, app, logger, port, stop };
  } catch (err) {
    await db.close();
    throw err;
  }
}
