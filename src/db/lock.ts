import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The embedded database can be opened by one process at a time. A pid file in its folder
 * turns a second opener into a clear message instead of a corrupted data folder.
 *
 * The file is created exclusively: our pid is written to a private file first and then
 * hard-linked into place, which fails if the name exists (as O_EXCL does) and never shows
 * another process an empty pid file. A pid file whose process is gone (a crash, `kill -9`) is
 * taken over; the takeover itself is guarded by a second exclusive file, so of two processes
 * that find the same stale file only one takes it.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'agentbase.pid');
  const guard = path.join(dataDir, 'agentbase.pid.takeover');
  const release = () => {
    if (readHolder(file) === process.pid) rmSync(file, { force: true });
  };

  for (let attempt = 0; attempt < 50; attempt++) {
    if (createExclusive(file)) return release;
    const holder = readHolder(file);
    if (holder === process.pid) return release;
    if (holder !== undefined && holder !== null && isAlive(holder)) throw inUse(dataDir, holder);
    if (holder === undefined) continue; // removed between our attempt and the read: try again
    if (holder === null && ageMs(file) < 1_000) {
      sleep(20); // just created without hard links: its pid is on the way
      continue;
    }

    // Stale (dead pid or unreadable content): take it over, one process at a time.
    if (!createExclusive(guard)) {
      // A guard left by a process that died mid-takeover (a takeover lasts milliseconds).
      if (ageMs(guard) > 5_000) rmSync(guard, { force: true });
      sleep(20);
      continue;
    }
    try {
      // Still the same stale holder? Another process may have taken over before our guard.
      const now = readHolder(file);
      if (now === holder) rmSync(file, { force: true });
    } finally {
      rmSync(guard, { force: true });
    }
  }
  throw new Error(`Could not lock the embedded database in ${dataDir}: ${file} keeps changing. Is another server starting?`);
}

function inUse(dataDir: string, holder: number): Error {
  return new Error(
    `The embedded database in ${dataDir} is in use by process ${holder} (is the server running?). Stop it first, or set DATABASE_URL to a PostgreSQL server.`,
  );
}

/** Creates `file` holding our pid, atomically; false if it already exists. */
function createExclusive(file: string): boolean {
  const mine = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(mine, String(process.pid));
  try {
    linkSync(mine, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
  } finally {
    rmSync(mine, { force: true });
  }
  // A file system without hard links: O_EXCL alone (the pid lands a moment after the name).
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** The pid in the file; null if the content is not a pid; undefined if there is no file. */
function readHolder(file: string): number | null | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Start-up only, and only while another process finishes a takeover of a few milliseconds. */
function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
