/**
 * Re-sync schedules as pg-boss schedules: one per web datasource or datastore whose
 * `resyncSchedule` is not `none`, keyed by the row, on the RESYNC_QUEUE. pg-boss's cron pass
 * creates each occurrence's job once however many processes run it, and one worker takes it.
 *
 * pg-boss writes schedules on its own connection, never inside the caller's transaction (on
 * PGlite that would wait for the transaction forever), so the row and its schedule are written
 * one after the other. A schedule left behind by a failure between the two heals itself: the job
 * reads the row, and unschedules itself when the row is gone or says `none`.
 */
import type { Job } from 'pg-boss';
import type { Em, Orm } from '../db/orm.ts';
import { Datastore } from '../datastores/datastore.entity.ts';
import type { Logger } from '../logger.ts';
import type { Queue } from '../queue/queue.ts';
import { Datasource, DatasourceType } from './datasource.entity.ts';
import { RESYNC_NONE, resyncCron } from './resync-schedule.ts';

export const RESYNC_QUEUE = 'resync-web';

/** A scheduled job is small (it only queues ingestion jobs): short expiry, a few retries. */
export const RESYNC_QUEUE_OPTIONS = { retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: 5 * 60 };

export type ResyncTarget = { datasourceId: string } | { datastoreId: string };

export function scheduleKey(target: ResyncTarget): string {
  return 'datasourceId' in target ? `datasource/${target.datasourceId}` : `datastore/${target.datastoreId}`;
}

export class ResyncSchedules {
  constructor(private readonly queue: Pick<Queue, 'boss'>) {}

  /** Creates, replaces or (for `none`) removes the schedule of a row. */
  async apply(target: ResyncTarget, schedule: string): Promise<void> {
    const id = 'datasourceId' in target ? target.datasourceId : target.datastoreId;
    const cron = resyncCron(schedule, id);
    const key = scheduleKey(target);
    if (cron) await this.queue.boss.schedule(RESYNC_QUEUE, cron, target, { key, tz: 'UTC' });
    else await this.queue.boss.unschedule(RESYNC_QUEUE, key);
  }

  async remove(target: ResyncTarget): Promise<void> {
    await this.queue.boss.unschedule(RESYNC_QUEUE, scheduleKey(target));
  }
}

export interface ResyncDeps {
  orm: Orm;
  queue: Queue;
  /** DatasourceService's (named structurally: the service itself depends on this module). */
  datasources: { requeueScheduled(em: Em, ds: Datasource): Promise<unknown> };
  logger: Logger;
}

export async function startResyncWorkers(deps: ResyncDeps): Promise<string> {
  return deps.queue.work<ResyncTarget>(RESYNC_QUEUE, { localConcurrency: 1, pollingIntervalSeconds: 2 }, (job) => runScheduledResync(deps, job));
}

/**
 * One occurrence of a schedule: the datasource (or every web datasource of the datastore) is
 * asked for again, as `resyncDatasource` does; the ingestion jobs then skip what did not change.
 * Idempotent: a datasource already waiting for or in processing is left alone.
 */
export async function runScheduledResync(deps: ResyncDeps, job: Pick<Job<ResyncTarget>, 'data'>): Promise<void> {
  const em = deps.orm.em.fork();
  const target = job.data;
  const schedules = new ResyncSchedules(deps.queue);
  if ('datasourceId' in target) {
    const ds = await em.findOne(Datasource, target.datasourceId);
    if (!ds || ds.resyncSchedule === RESYNC_NONE) return schedules.remove(target);
    await deps.datasources.requeueScheduled(em, ds);
    return;
  }
  const datastore = await em.findOne(Datastore, target.datastoreId);
  if (!datastore || datastore.resyncSchedule === RESYNC_NONE) return schedules.remove(target);
  datastore.lastSynch = new Date();
  await em.flush();
  // A site's pages are re-read by the site's own crawl.
  const web = await em.find(Datasource, { datastore, type: { $in: [DatasourceType.web_page, DatasourceType.web_site] }, groupId: null });
  for (const ds of web) await deps.datasources.requeueScheduled(em, ds);
  deps.logger.info('scheduled re-sync', { datastoreId: datastore.id, datasources: web.length });
}
