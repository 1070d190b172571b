/**
 * A service process as an operator runs it (`npm start` / `npm run worker`, through spawnMain),
 * on a database and a storage folder the test chooses: for tests that run several at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase } from './app.ts';
import { freePort, spawnMain, type ServiceProcess } from './process.ts';

export interface Started {
  proc: ServiceProcess;
  /** http://127.0.0.1:PORT (also for ROLE=worker, whose port nothing listens on). */
  url: string;
  /** The REST base URL. */
  api: string;
}

/** Starts one process and waits until it serves (or, ROLE=worker, until its workers run). */
export async function startProcess(env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const proc = spawnMain({ PORT: String(port), ...env });
  await proc.waitForLog(env.ROLE === 'worker' ? 'workers started' : 'listening', 60_000);
  const url = `http://127.0.0.1:${port}`;
  return { proc, url, api: `${url}/api` };
}

/** One database (PostgreSQL on TEST_DATABASE_URL, else the embedded one in the folder) and one storage folder. */
export async function sharedData(): Promise<{ env: Record<string, string>; dataDir: string; databaseUrl: string | null; drop(): Promise<void> }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agentbase-procs-'));
  const database = await createTestDatabase();
  const databaseUrl = database.url.startsWith('postgres') ? database.url : null;
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl ?? '' },
    dataDir,
    databaseUrl,
    drop: async () => {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A service on the local OpenAI-compatible test server, for chat and (64-dimension) embeddings. */
export const endpointEnv = (modelUrl: string): Record<string, string> => ({
  OPENAI_BASE_URL: modelUrl,
  OPENAI_API_KEY: 'test-key',
  EMBEDDING_MODEL: 'text-embedding-3-small',
  EMBEDDING_DIMENSION: '64',
});

/** Jobs of a dead worker retried within ~10 s (heartbeat) + 1 s (supervision) + 1-2 s (retry delay). */
export const FAST_RECOVERY: Record<string, string> = { JOB_HEARTBEAT_SECONDS: '10', QUEUE_SUPERVISE_SECONDS: '1', JOB_RETRY_DELAY_SECONDS: '1' };
