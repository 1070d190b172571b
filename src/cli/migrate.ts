/** npm run migrate: applies pending migrations to the configured database and exits. */
import 'reflect-metadata';
import { loadConfig } from '../config.ts';
import { lockDataDir } from '../db/lock.ts';
import { openDatabase } from '../db/orm.ts';
import { entities } from '../entities.ts';

const config = loadConfig();
const unlock = config.database.kind === 'pglite' && config.database.dataDir ? lockDataDir(config.database.dataDir) : () => {};
try {
  const db = await openDatabase(config.database, { entities, migrate: false });
  const pending = await db.orm.migrator.getPending();
  await db.orm.migrator.up();
  process.stdout.write(pending.length ? `Applied ${pending.map((m) => m.name).join(', ')}.\n` : 'Nothing to apply: the database is up to date.\n');
  await db.close();
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  unlock();
}
