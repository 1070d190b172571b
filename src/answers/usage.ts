import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { AppError } from '../errors.ts';

export function currentPeriod(now = new Date()): string {
  return now.toISOString().slice(0, 7); // YYYY-MM, UTC
}

/**
 * Reserves one query of the organization's monthly allowance, atomically: concurrent requests
 * can never pass the limit together. Throws PAYMENT_REQUIRED when it is used up.
 */
export async function reserveQuery(em: Em, organizationId: string): Promise<void> {
  const period = currentPeriod();
  const rows = await rawQuery<{ queries: string }>(
    em,
    `insert into organization_usage as u (organization_id, period, queries)
       select o.id, $2, 1 from organizations o where o.id = $1 and o.monthly_query_limit > 0
     on conflict (organization_id, period) do update set queries = u.queries + 1
       where u.queries < (select monthly_query_limit from organizations where id = $1)
     returning queries`,
    [organizationId, period],
  );
  if (!rows.length) {
    throw new AppError('PAYMENT_REQUIRED', 'The monthly query allowance of this organization is used up.', { period });
  }
}

/** Gives a reserved query back (the answer failed before it was produced). */
export async function refundQuery(em: Em, organizationId: string): Promise<void> {
  await rawQuery(em, `update organization_usage set queries = greatest(queries - 1, 0) where organization_id = $1 and period = $2`, [organizationId, currentPeriod()]);
}

export async function queriesUsed(em: Em, organizationId: string): Promise<number> {
  const rows = await rawQuery<{ queries: string }>(em, `select queries from organization_usage where organization_id = $1 and period = $2`, [organizationId, currentPeriod()]);
  return Number(rows[0]?.queries ?? 0);
}
