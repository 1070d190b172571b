/**
 * pg-boss on the service's own database: on PGlite it shares the one in-process instance; on
 * PostgreSQL it has its own pool. Jobs are enqueued through the caller's open transaction, so a
 * row and the job that processes it are committed together or not at all.
 */
import type { PGlite } from '@electric-sql/pglite';
import { fromKysely, fromPglite, PgBoss, type Job, type JobResult, type QueueOptions, type WorkOptions } from 'pg-boss';
import type { DatabaseConfig } from '../config.ts';
import type { Em } from '../db/orm.ts';
import type { Logger } from '../logger.ts';
import { watchJob, type Progress } from './watchdog.ts';

export interface QueueDefinition {
  name: string;
  options: QueueOptions;
}

export interface Queue {
  readonly boss: PgBoss;
  /** Enqueues inside `em`'s transaction when there is one. */
  send(em: Em, name: string, data: object, options?: { singletonKey?: string; startAfter?: number }): Promise<string | null>;
  /**
   * Runs `handler` for each job, each watched for progress (watchdog.ts): its `signal` is the
   * progress's. A job that fails (or stalls) fails alone; the rest of its batch runs on.
   */
  work<T extends object>(name: string, options: WorkOptions, handler: (job: Job<T> & { retryLimit?: number; progress: Progress }) => Promise<void>): Promise<string>;
  stop(): Promise<void>;
  /**
   * SIGTERM: fetches no more jobs; those running get graceMs to finish, then are failed, so another
   * worker retries them. The pool stays open for requests still in flight that enqueue; stop() closes it.
   */
  drain(graceMs: number): Promise<void>;
}

export interface QueueSettings {
  /**
   * How often this process's supervisor fails jobs whose heartbeat stopped (a dead worker) or
   * that ran past expireInSeconds, so they are retried; every process supervises.
   */
  superviseSeconds: number;
  /** JOB_STALL_SECONDS: a job that reports no progress for this long is aborted and failed (retried); 0 = never. */
  stallSeconds?: number;
}

/** How long a stalled handler may still take to record its failure before its job is failed without it. */
const STALL_GRACE_MS = 10_000;

export async function startQueue(
  database: DatabaseConfig,
  pglite: PGlite | null,
  definitions: QueueDefinition[],
  logger: Logger,
  settings: QueueSettings = { superviseSeconds: 60 },
): Promise<Queue> {
  // Expired jobs and missed heartbeats are found by the monitor pass, which runs on the supervise
  // timer once monitorIntervalSeconds have passed: both intervals set the delay.
  const supervision = { superviseIntervalSeconds: settings.superviseSeconds, monitorIntervalSeconds: settings.superviseSeconds };
  const boss = pglite
    ? new PgBoss({ db: fromPglite(pglite), backend: 'pglite', schema: 'pgboss', ...supervision })
    : new PgBoss({ connectionString: (database as { url: string }).url, schema: 'pgboss', max: 5, ...supervision });
  boss.on('error', (error) => logger.error('queue error', { error }));
  await boss.start();
  // Queues exist before the first transactional send (a send must not create one mid-transaction).
  for (const def of definitions) {
    const existing = await boss.getQueue(def.name);
    if (existing) await boss.updateQueue(def.name, def.options);
    else await boss.createQueue(def.name, def.options);
    // pg-boss looks a queue up on its first use and caches it; a process that only sends (ROLE=api)
    // would do that lookup inside the caller's transaction, on another connection, and on PGlite
    // (one connection) wait for that transaction forever. Any queue operation out here fills the cache.
    await boss.findJobs(def.name, { id: '00000000-0000-0000-0000-000000000000' });
  }

  return {
    boss,
    send(em, name, data, options = {}) {
      const trx = em.getTransactionContext();
      return boss.send(name, data, { ...options, ...(trx ? { db: fromKysely(trx as never) } : {}) });
    },
    async work(name, options, handler) {
      const stallMs = (settings.stallSeconds ?? 0) * 1000;
      return boss.work(name, { ...options, includeMetadata: true, perJobResults: true } as WorkOptions & { includeMetadata: true; perJobResults: true }, async (jobs) => {
        const results: JobResult[] = [];
        for (const job of jobs) {
          // The worker is stopping (or lost the claim): pg-boss hands this job back; it is not started.
          if (job.signal.aborted) {
            results.push({ id: job.id, status: 'failed', output: job.signal.reason });
            continue;
          }
          const watch = watchJob(stallMs, job.signal);
          try {
            await watch.settle(handler({ ...job, signal: watch.signal, progress: watch } as never), STALL_GRACE_MS);
            results.push({ id: job.id, status: 'completed' });
          } catch (error) {
            results.push({ id: job.id, status: 'failed', output: error });
          } finally {
            watch.stop();
          }
        }
        return results;
      });
    },
    stop: () => boss.stop({ graceful: true, timeout: 10_000, close: true }),
    drain: (graceMs) => boss.stop({ graceful: true, timeout: graceMs, close: false }),
  };
}
