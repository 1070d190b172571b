import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Creates the embedded database's files in a short-lived child process when the folder has none
 * yet. PGlite's own first start runs `initdb` in the calling process, in two more WebAssembly
 * instances (a scratch database and initdb itself, ~400 MB at their peak); what they leave is
 * returned only when V8 next collects garbage, which a service at rest may not do for a long
 * time (docs/operations.md#memory). In a child process all of it goes back to the system when
 * the child exits, and the service then opens the folder as on every later start.
 */
export async function initdbApart(dataDir: string): Promise<void> {
  if (existsSync(path.join(dataDir, 'PG_VERSION'))) return;
  const pglite = import.meta.resolve('@electric-sql/pglite');
  const script = `const { PGlite } = await import(${JSON.stringify(pglite)}); const db = await PGlite.create({ dataDir: process.argv[1] }); await db.close();`;
  try {
    await run(process.execPath, ['--input-type=module', '--eval', script, dataDir], { env: {}, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`Could not create the embedded database in ${dataDir}: ${stderr.split('\n').slice(-3).join(' ') || (err as Error).message}`, { cause: err });
  }
}
