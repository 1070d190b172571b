/**
 * Boots the real service for a test file: the real database (embedded PGlite in memory, or a
 * fresh database on TEST_DATABASE_URL's server), real HTTP on a free port.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { start, type Running } from '../../src/boot.ts';
import { loadConfig } from '../../src/config.ts';
import type { Logger } from '../../src/logger.ts';
import { registerRestBase } from './openapi-check.ts';
import { adminQuery, databaseUrl } from './pg-admin.ts';

export interface TestApp extends Running {
  url: string;
  /** REST base URL (…/api). */
  api: string;
  databaseUrl: string;
  close(): Promise<void>;
}

export async function startTestApp(env: Record<string, string> = {}, opts: { logger?: Logger } = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agentbase-test-'));
  const database = await createTestDatabase();
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  });
  const running = await start(config, { ...opts, pgliteTemplate: config.database.kind === 'pglite' && !config.database.dataDir ? pgliteTemplate() : undefined });
  const url = `http://127.0.0.1:${running.port}`;
  registerRestBase(url, config.restBasePath);
  return {
    ...running,
    url,
    api: `${url}${config.restBasePath}`,
    databaseUrl: database.url,
    close: async () => {
      await running.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let pgliteDump: Blob | undefined;
/** The run's migrated embedded database (support/database-template.ts), read once per test file. */
export function pgliteTemplate(): Blob | undefined {
  const file = inject('pgliteTemplate');
  if (file && !pgliteDump) pgliteDump = new Blob([readFileSync(file)]);
  return pgliteDump;
}

/** A database of its own per test file, so files run in parallel without teardown races. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) return { url: 'pglite://memory', drop: async () => {} };
  const name = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  // The run's migrated database (support/database-template.ts), when there is one.
  const source = inject('postgresTemplate');
  await adminQuery(server, `create database "${name}"${source ? ` template "${source}"` : ''}`);
  return { url: databaseUrl(server, name), drop: async () => void (await adminQuery(server, `drop database if exists "${name}" with (force)`)) };
}
