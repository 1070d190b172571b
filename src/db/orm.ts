import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { ReflectMetadataProvider } from '@mikro-orm/decorators/legacy';
import { Migrator } from '@mikro-orm/migrations';
import { PgliteDriver } from '@mikro-orm/pglite';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { MikroORM } from '@mikro-orm/sql';
import type { EntityClass } from '@mikro-orm/core';
import { migrations } from '../../migrations/index.ts';
import type { DatabaseConfig } from '../config.ts';
import { vectorSessionSql } from './vector-index.ts';
import { pgliteStartParams } from './pglite-settings.ts';
import { yieldBeforeStatements } from './pglite-turns.ts';
import { initdbApart } from './pglite-initdb.ts';

import type { Orm } from './types.ts';

export type { Em, Orm } from './types.ts';

export class DatabaseSetupError extends Error {
  override name = 'DatabaseSetupError';
}

export interface Database {
  orm: Orm;
  /** The in-process PGlite instance when embedded (shared with pg-boss), else null. */
  pglite: PGlite | null;
  close(): Promise<void>;
}

/** Opens the database, checks pgvector is there, and (unless told not to) applies migrations. */
export async function openDatabase(
  config: DatabaseConfig,
  opts: {
    entities: EntityClass[];
    migrate?: boolean;
    debug?: boolean;
    /**
     * An in-memory database starts from this dump (PGlite's dumpDataDir) instead of running
     * initdb: the test suite's migrated template, which saves most of a start's CPU.
     */
    template?: Blob;
  },
): Promise<Database> {
  const common = {
    // The entity list is handed down by whoever starts the process (boot, CLI): the list imports every feature.
    entities: opts.entities,
    metadataProvider: ReflectMetadataProvider,
    extensions: [Migrator],
    migrations: {
      migrationsList: migrations,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    debug: opts.debug ?? false,
    // Identity map is per request (em.fork()); the global one is never used for work.
    allowGlobalContext: false,
  };

  let orm: Orm;
  let pglite: PGlite | null = null;
  if (config.kind === 'pglite') {
    if (config.dataDir) mkdirSync(config.dataDir, { recursive: true });
    if (config.dataDir) await initdbApart(config.dataDir);
    pglite = await PGlite.create({
      dataDir: config.dataDir ?? undefined,
      extensions: { vector },
      startParams: pgliteStartParams(config.sharedBuffersMb),
      loadDataDir: config.dataDir ? undefined : opts.template,
    });
    const instance = pglite;
    yieldBeforeStatements(instance);
    // One session for everything: the vector search settings are set once.
    await instance.query(vectorSessionSql());
    orm = await MikroORM.init({ ...common, driver: PgliteDriver, dbName: 'postgres', driverOptions: { pglite: instance } } as never);
  } else {
    orm = await MikroORM.init({
      ...common,
      driver: PostgreSqlDriver,
      clientUrl: config.url,
      pool: { min: 0, max: 20 },
      // Every pooled connection gets the vector search settings once, when it is opened, before
      // pg-pool hands it to anyone: to the ORM and also to the statements prepared on the pool
      // itself (rawQuery's `prepared`), which the ORM's own connection hook would not see.
      driverOptions: { onConnect: (client: { query(sql: string): Promise<unknown> }) => client.query(vectorSessionSql()) },
    } as never);
  }

  const close = async () => {
    await orm.close(true);
    if (pglite && !pglite.closed) await pglite.close();
  };

  try {
    await assertPgvector(orm, config);
    if (opts.migrate !== false) await orm.migrator.up();
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
  return { orm, pglite, close };
}

/** One clear sentence when the server cannot give us the vector type. */
export async function assertPgvector(orm: Orm, config: DatabaseConfig): Promise<void> {
  let rows: { name: string }[];
  try {
    rows = await orm.em.getConnection().execute(
      `select name from pg_available_extensions where name = 'vector'`,
    );
  } catch (err) {
    throw new DatabaseSetupError(`Cannot reach the database: ${(err as Error).message}`);
  }
  if (rows.length === 0) {
    const where = config.kind === 'postgres' ? `the PostgreSQL server at ${redact(config.url)}` : 'the embedded database';
    throw new DatabaseSetupError(
      `The pgvector extension is missing on ${where}: install pgvector there (for example the postgresql-17-pgvector package) or use a PostgreSQL service that offers it.`,
    );
  }
}

function redact(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}${u.pathname}`;
}

/** Pending migrations, for /readyz. */
export async function pendingMigrations(orm: Orm): Promise<number> {
  return (await orm.migrator.getPending()).length;
}
