/**
 * The monthly query allowance: one query per answer (and per model call of a form turn or the
 * universal processor), counted per organization and month in `organization_usage`.
 */
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { AppError } from '../errors.ts';
import { GroupedReservations } from './grouped.ts';

export function currentPeriod(now = new Date()): string {
  return now.toISOString().slice(0, 7); // YYYY-MM, UTC
}

/**
 * Reserves one query of the organization's monthly allowance, atomically: concurrent requests
 * can never pass the limit together. Throws PAYMENT_REQUIRED when it is used up.
 */
export async function reserveQuery(em: Em, organizationId: string, period = currentPeriod()): Promise<void> {
  // reserve_query (migration 20261124000000): the upsert, refused past the organization's limit.
  const rows = await rawQuery<{ queries: string | null }>(em, 'select reserve_query($1, $2) as queries', [organizationId, period]);
  if (rows[0]?.queries == null) throw usedUp(period);
}

const usedUp = (period: string) => new AppError('PAYMENT_REQUIRED', 'The monthly query allowance of this organization is used up.', { period });

/** Gives a reserved query back (the answer failed before it was produced). */
export async function refundQuery(em: Em, organizationId: string, period = currentPeriod()): Promise<void> {
  await rawQuery(em, `update organization_usage set queries = greatest(queries - 1, 0) where organization_id = $1 and period = $2`, [organizationId, period]);
}

/**
 * The answer path's side of the allowance: one query reserved ahead per organization. When an
 * answer ends, the next one's query is reserved in the background (a real reservation, so the
 * limit holds across processes), and the next question of that organization starts without a
 * database round trip before its model call. A question that finds no spare (the first one, or
 * one of several at once) reserves its own, as `reserveQuery` does.
 *
 * What it costs: the stored count runs at most one ahead per organization and process while
 * the process lives; spares go back at shutdown (a crash keeps them counted), and a spare of a
 * past month goes back to that month. A limit lowered by hand lets one more question through.
 */
export class QueryAllowance {
  /** Organization id → its spare: the period it counts in, and whether its reservation held. */
  private readonly spares = new Map<string, { period: string; held: Promise<boolean> }>();
  private readonly pending = new Set<Promise<unknown>>();
  private closed = false;
  /** Questions arriving together reserve in one statement (grouped.ts). */
  private readonly grouped = new GroupedReservations();

  /** One query for an answer; returns the period it counts in. Throws PAYMENT_REQUIRED. */
  async reserve(em: Em, organizationId: string): Promise<string> {
    const period = currentPeriod();
    const spare = this.spares.get(organizationId);
    if (spare) {
      this.spares.delete(organizationId);
      if (await spare.held) {
        if (spare.period === period) return period;
        this.track(refundQuery(em, organizationId, spare.period).catch(() => {}));
      }
    }
    if (!(await this.grouped.reserve(em, organizationId, period))) throw usedUp(period);
    return period;
  }

  /** An answer that produced nothing gives its query back (kept as the spare when there is none and it is of this month). */
  async refund(em: Em, organizationId: string, period: string): Promise<void> {
    if (!this.closed && !this.spares.has(organizationId) && period === currentPeriod()) this.spares.set(organizationId, { period, held: Promise.resolve(true) });
    else await refundQuery(em, organizationId, period);
  }

  /** After an answer: reserve the organization's next query in the background (never throws). */
  reserveAhead(em: Em, organizationId: string): void {
    if (this.closed || this.spares.has(organizationId)) return;
    // Claimed at once, so answers ending together reserve one spare; a question that takes it
    // before the reservation is back waits for it.
    const period = currentPeriod();
    const held = reserveQuery(em, organizationId, period).then(
      () => true,
      () => false, // used up, or the database is unreachable: the next question reserves its own
    );
    this.spares.set(organizationId, { period, held });
    this.track(held);
  }

  /**
   * Queries of this period this process counted ahead of any question (its spare), so a usage
   * read-out can show the questions actually asked: 1 or 0.
   */
  async heldAhead(organizationId: string, period = currentPeriod()): Promise<number> {
    const spare = this.spares.get(organizationId);
    return spare && spare.period === period && (await spare.held) ? 1 : 0;
  }

  /** Waits for background reservations and give-backs. */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  /** Gives every spare back; answers after this reserve their own. */
  async close(em: Em): Promise<void> {
    this.closed = true;
    await this.settled();
    const spares = [...this.spares];
    this.spares.clear();
    await Promise.all(spares.map(async ([organizationId, spare]) => (await spare.held) && refundQuery(em, organizationId, spare.period).catch(() => {})));
  }

  private track(work: Promise<unknown>): void {
    const done: Promise<unknown> = work.then(
      () => this.pending.delete(done),
      () => this.pending.delete(done),
    );
    this.pending.add(done);
  }
}
