/**
 * Stalled work, noticed. A datasource says it is being processed (`unsynched`, `pending`,
 * `running`) while no job of it is waiting or running any more: its last job failed (a worker
 * died on the last attempt, the database was gone when it wanted to record the failure), ended
 * without a result, or is gone. pg-boss retries dead workers' jobs (heartbeats); this finds what
 * is left when it gives up, so no datasource stays in progress forever and each carries its reason.
 *
 * An `unsynched` datasource that never had a job is an upload link waiting for its file: not stalled.
 */
import { DatasourceStatus as S } from './datasource.entity.ts';

const IN_PROGRESS = [S.unsynched, S.pending, S.running];
const FAILED = [S.error, S.usage_limit_reached];
const LIVE_JOB = ['created', 'retry', 'active'];

export interface StalledRow {
  id: string;
  status: S;
  error_message: string | null;
  job_state: string | null;
  job_retries: number | null;
  job_output: unknown;
  stuck: boolean;
}

/** The latest job of each datasource, and whether the datasource is stuck; `$1` is the ingest queue's name. */
const withJobs = (where: string, source = 'datasources') => `
  select d.id, d.status, d.error_message, j.state as job_state, j.retry_count as job_retries, j.output as job_output, s.stuck
    from ${source} d
    left join lateral (
      select state, retry_count, output from pgboss.job
       where name = $1 and data->>'datasourceId' = d.id::text
       order by created_on desc limit 1
    ) j on true
    cross join lateral (
      select d.status = any('{${IN_PROGRESS.join(',')}}'::text[])
         and (j.state is not null or d.status <> '${S.unsynched}')
         and not exists (
           select 1 from pgboss.job l
            where l.name = $1 and l.data->>'datasourceId' = d.id::text and l.state = any('{${LIVE_JOB.join(',')}}'::pgboss.job_state[])
         ) as stuck
    ) s
   where ${where}`;

/**
 * Stuck datasources of every organization untouched for `$2` seconds or more, at most `$3`. The
 * jobs of at most `$4` of the oldest in-progress datasources are looked at per sweep (each look is
 * a scan of the queue's jobs by their data): a backlog of waiting ones is worked through in turns.
 */
export const sweepSql = () =>
  withJobs(
    `s.stuck order by d.updated_at limit $3`,
    `(select * from datasources
       where status = any('{${IN_PROGRESS.join(',')}}'::text[]) and updated_at < now() - make_interval(secs => $2)
       order by updated_at limit $4)`,
  );

/**
 * An organization's (`$2`) failed and stuck datasources, newest first: `$3` the datastores a key
 * is limited to (null: all), `$4` the cursor (null: from the newest), `$5` the page size + 1.
 */
export const problemsSql = () =>
  withJobs(
    `d.organization_id = $2 and ($3::uuid[] is null or d.datastore_id = any($3::uuid[])) and ($4::uuid is null or d.id < $4::uuid)
       and (d.status = any('{${FAILED.join(',')}}'::text[]) or s.stuck)
     order by d.id desc limit $5`,
  );

/** Why a datasource is not done: its own error message, or what became of its last job. */
export function reasonOf(row: Pick<StalledRow, 'error_message' | 'job_state' | 'job_retries' | 'job_output' | 'stuck' | 'status'>): string {
  if (!row.stuck && row.error_message) return row.error_message;
  const output = row.job_output as { message?: unknown } | null;
  const detail = output && typeof output.message === 'string' && output.message ? `: ${output.message.split('\n')[0]!.slice(0, 300)}` : '';
  switch (row.job_state) {
    case 'failed':
      return `Processing stopped: its job failed after ${(row.job_retries ?? 0) + 1} attempt(s)${detail}.`;
    case 'completed':
      return `Processing ended without a result: its job completed while the datasource was still ${row.status}.`;
    case 'cancelled':
      return 'Processing stopped: its job was cancelled.';
    case null:
      return 'Processing stopped: its job is gone.';
    default:
      return row.error_message ?? `The datasource is ${row.status}.`;
  }
}
