/**
 * The `resyncSchedule` of a web datasource or a datastore: `none`, `daily`, `weekly`, or a
 * five-field cron expression (UTC). Pure: what a value means, when it fires next, and the cron
 * that pg-boss is given for it (resync.schedules.ts registers it).
 */
import { createHash } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import { badInput } from '../errors.ts';

export const RESYNC_NONE = 'none';
const NAMED = ['none', 'daily', 'weekly'];

/**
 * The schedule as stored: a named value, or the cron expression with its fields single-spaced.
 * Undefined/null mean `none`. Throws BAD_USER_INPUT naming `field`.
 */
export function normalizeResyncSchedule(value: string | null | undefined, field = 'resyncSchedule'): string {
  if (value == null) return RESYNC_NONE;
  const trimmed = value.trim();
  if (NAMED.includes(trimmed.toLowerCase())) return trimmed.toLowerCase();
  const fields = trimmed.split(/\s+/);
  // cron-parser also takes a seconds field and @aliases; the documented form is five fields, which
  // is also what keeps a re-sync from firing more than once a minute.
  if (trimmed.length > 200 || fields.length !== 5 || fields.some((f) => f.startsWith('@'))) {
    throw badInput(`${field} must be none, daily, weekly or a five-field cron expression (minute hour day-of-month month day-of-week), not ${JSON.stringify(value.slice(0, 100))}.`, { field });
  }
  const cron = fields.join(' ');
  try {
    CronExpressionParser.parse(cron, { tz: 'UTC', strict: false });
  } catch (err) {
    throw badInput(`${field} is not a valid cron expression: ${err instanceof Error ? err.message : String(err)}.`, { field });
  }
  return cron;
}

/**
 * The cron expression that runs `schedule` for the row `id`, or null for none. daily and weekly
 * fire at a time derived from the id, so a deployment's schedules spread over the day and week
 * instead of all crawling at midnight.
 */
export function resyncCron(schedule: string, id: string): string | null {
  if (schedule === RESYNC_NONE) return null;
  const spread = createHash('sha256').update(id).digest().readUInt32BE(0);
  const minute = spread % 60;
  const hour = Math.floor(spread / 60) % 24;
  if (schedule === 'daily') return `${minute} ${hour} * * *`;
  if (schedule === 'weekly') return `${minute} ${hour} * * ${Math.floor(spread / 1440) % 7}`;
  return schedule;
}

/** When `schedule` next fires for the row `id` after `from`, or null for none. */
export function nextResyncAt(schedule: string | null | undefined, id: string, from: Date = new Date()): Date | null {
  const cron = resyncCron(schedule ?? RESYNC_NONE, id);
  if (!cron) return null;
  try {
    return CronExpressionParser.parse(cron, { tz: 'UTC', strict: false, currentDate: from }).next().toDate();
  } catch {
    return null; // only a value written around normalizeResyncSchedule could get here
  }
}
