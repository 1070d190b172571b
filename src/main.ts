import { start } from './boot.ts';
import { ConfigError, loadConfig } from './config.ts';
import { lockDataDir } from './db/lock.ts';
import { DatabaseSetupError } from './db/orm.ts';
import { installProcessGuard } from './http/process-guard.ts';

async function main() {
  const config = loadConfig();
  const unlock = config.database.kind === 'pglite' && config.database.dataDir ? lockDataDir(config.database.dataDir) : () => {};
  let running;
  try {
    running = await start(config);
  } catch (err) {
    unlock();
    throw err;
  }
  const { logger, port, stop, drain } = running;

  // One stop, whoever asks first (a signal, or the guard after an error from nowhere). `on`, not
  // `once`: a supervisor and `npm` may both deliver a signal, and a second one during the stop must
  // not fall back to the default action and kill the process mid-stop (the deadline bounds it).
  let stopping = false;
  const shutdown = async (reason: string, code: number, graceful = false) => {
    if (stopping) return void logger.info('already shutting down', { reason });
    stopping = true;
    logger.info('shutting down', { reason });
    // The grace, then 9 s for the stop itself: a supervisor should allow SHUTDOWN_GRACE_MS + 10 s.
    const timer = setTimeout(
      () => {
        logger.error('shutdown timed out; exiting');
        process.exit(1);
      },
      (graceful ? config.shutdownGraceMs : 0) + 9_000,
    );
    timer.unref();
    try {
      // A signal lets work in flight finish (src/http/drain.ts); an error from nowhere does not wait.
      if (graceful) await drain().catch((error: unknown) => logger.error('drain failed', { error }));
      await stop();
    } finally {
      unlock();
    }
    process.exit(code);
  };
  // What happens to an error nothing caught: see process-guard.ts for when it keeps serving.
  installProcessGuard(process, logger, (code) => void shutdown('uncaught exception', code));
  process.on('SIGTERM', () => void shutdown('SIGTERM', 0, true));
  process.on('SIGINT', () => void shutdown('SIGINT', 0, true));

  if (running.app) {
    logger.info('listening', {
      url: `http://localhost:${port}`,
      graphql: '/graphql',
      rest: config.restBasePath || '/',
      database: config.database.kind,
      role: config.role,
      workers: config.role === 'all',
    });
  } else {
    // ROLE=worker: no HTTP server, only the queue workers.
    logger.info('workers started', { role: config.role, database: config.database.kind, http: false });
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof DatabaseSetupError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    process.stderr.write(`Start-up failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  }
  process.exit(1);
});
