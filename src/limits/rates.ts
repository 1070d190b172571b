/**
 * Request rates counted in PostgreSQL (table `rate_counters`, migration 20261125000000), so every
 * API process counts against the same budget and a restart forgets nothing. A window opens at a
 * key's first hit and lasts `windowSeconds`; database time decides, so processes whose clocks
 * differ still agree. (rate-limiter-flexible's Postgres store wants a pg client; PGlite is not one.)
 */
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';

export interface Hit {
  key: string;
  windowSeconds: number;
  /** Hits the window allows: the count says how many remain. */
  limit: number;
}

export interface Count {
  key: string;
  /** Hits of the key in its window, this one included. */
  hits: number;
  limit: number;
  /** Hits still allowed in the window after this one (0 once it is spent). */
  remaining: number;
  /** Seconds until the key's window ends (at least 1). */
  retryAfterSeconds: number;
}

/** One statement counts a hit on every key given: `rate_hit` (migration 20261125000000). */
const HIT_SQL = 'select key, hits, retry_after from rate_hit($1::text[], $2::integer[])';

/** Counts one hit on each key, in one statement. */
export async function hit(em: Em, hits: Hit[]): Promise<Count[]> {
  const rows = await rawQuery<{ key: string; hits: number; retry_after: number }>(em, HIT_SQL, [hits.map((h) => h.key), hits.map((h) => h.windowSeconds)]);
  const limits = new Map(hits.map((h) => [h.key, h.limit]));
  return rows.map((r) => {
    const limit = limits.get(r.key)!;
    const count = Number(r.hits);
    return { key: r.key, hits: count, limit, remaining: Math.max(0, limit - count), retryAfterSeconds: Number(r.retry_after) };
  });
}

/** Forgets a key (a sign-in that succeeded clears its failures). */
export async function forget(em: Em, key: string): Promise<void> {
  await rawQuery(em, 'delete from rate_counters where key = $1', [key]);
}

/** Deletes the rows of ended windows (keys never seen again would otherwise stay forever). */
export async function prune(em: Em): Promise<void> {
  await rawQuery(em, 'delete from rate_counters where expires_at < now()');
}
