/**
 * vitest globalSetup: one migrated embedded database for the whole run, dumped to a file that
 * every in-memory test app starts from (support/app.ts); on PostgreSQL (TEST_DATABASE_URL), one
 * migrated database that each test file's database is created from. A fresh PGlite runs initdb in
 * WebAssembly and then every migration: about 4 s of CPU per app, and the PGlite suite starts
 * around a hundred apps. Loading the dump costs a fraction of that, and the database each test
 * gets is the same one (the dump is taken right after the migrations a fresh start applies;
 * start() still runs the migrator, which finds nothing left to do). Built on every run, from
 * the migrations of the checkout, so it cannot be stale.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/orm.ts';
import { entities } from '../../src/entities.ts';
import { adminQuery, databaseUrl } from './pg-admin.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The dump's file, or null on PostgreSQL (TEST_DATABASE_URL). */
    pgliteTemplate: string | null;
    /** On PostgreSQL: the migrated database each test database is created from, or null. */
    postgresTemplate: string | null;
  }
}

export default async function setup(project: TestProject) {
  const server = process.env.TEST_DATABASE_URL;
  project.provide('pgliteTemplate', null);
  project.provide('postgresTemplate', null);
  if (server) {
    // The same on PostgreSQL: `create database … template` copies the migrated one.
    const name = `t_template_${process.pid}_${randomBytes(4).toString('hex')}`;
    await adminQuery(server, `create database "${name}"`);
    try {
      const db = await openDatabase({ kind: 'postgres', url: databaseUrl(server, name) }, { entities });
      await db.close();
    } catch (err) {
      await adminQuery(server, `drop database if exists "${name}" with (force)`);
      throw err;
    }
    project.provide('postgresTemplate', name);
    return () => adminQuery(server, `drop database if exists "${name}" with (force)`);
  }
  const db = await openDatabase({ kind: 'pglite', dataDir: null }, { entities });
  const file = path.join(tmpdir(), `agentbase-pglite-template-${process.pid}-${randomBytes(4).toString('hex')}.tar`);
  try {
    // Written to the data files, so a load starts clean instead of replaying the log.
    await db.pglite!.query('checkpoint');
    const dump = await db.pglite!.dumpDataDir('none');
    writeFileSync(file, new Uint8Array(await dump.arrayBuffer()));
  } finally {
    await db.close();
  }
  project.provide('pgliteTemplate', file);
  return () => rmSync(file, { force: true });
}
