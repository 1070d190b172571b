import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The embedded database can be opened by one process at a time. A pid file in its folder
 * turns a second opener into a clear message instead of a corrupted data folder.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'agentbase.pid');
  let holder: number | null = null;
  try {
    holder = Number(readFileSync(file, 'utf8').trim()) || null;
  } catch {
    holder = null;
  }
  if (holder && holder !== process.pid && isAlive(holder)) {
    throw new Error(
      `The embedded database in ${dataDir} is in use by process ${holder} (is the server running?). Stop it first, or set DATABASE_URL to a PostgreSQL server.`,
    );
  }
  writeFileSync(file, String(process.pid));
  return () => rmSync(file, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
