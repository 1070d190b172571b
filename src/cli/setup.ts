/**
 * npm run setup -- --org "Acme" --email admin@acme.test [--password …] [--json]
 * Creates an organization, its owner and an API key, without a dashboard.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { AuthService } from '../auth/auth.service.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { lockDataDir } from '../db/lock.ts';
import { DatabaseSetupError, openDatabase } from '../db/orm.ts';
import { entities } from '../entities.ts';
import { AppError } from '../errors.ts';
import { Limits } from '../limits/limits.ts';

const USAGE = 'Usage: npm run setup -- --org "Acme" --email admin@acme.test [--password <password>] [--json]';

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        org: { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) return void process.stdout.write(`${USAGE}\n`), 0;
  if (!values.org || !values.email) {
    process.stderr.write(`Both --org and --email are required.\n${USAGE}\n`);
    return 2;
  }

  const config = loadConfig();
  const unlock = config.database.kind === 'pglite' && config.database.dataDir ? lockDataDir(config.database.dataDir) : () => {};
  try {
    const db = await openDatabase(config.database, { entities });
    try {
      const result = await new AuthService(config, null, new Limits(config.rateLimits)).setup(db.orm.em.fork(), {
        organizationName: values.org,
        email: values.email,
        password: values.password,
      });
      if (!values.json) {
        process.stdout.write(
          [
            `Organization ${values.org} created (${result.organizationId}).`,
            `User ${values.email} (${result.userId}), password: ${result.password}`,
            `API key (shown once, store it now): ${result.apiKey}`,
            '',
          ].join('\n'),
        );
      }
      // Always last: one JSON line scripts can read.
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    } finally {
      await db.close();
    }
  } finally {
    unlock();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof AppError || err instanceof ConfigError || err instanceof DatabaseSetupError) {
      process.stderr.write(`${err.message}\n`);
    } else process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
