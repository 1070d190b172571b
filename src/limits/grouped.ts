/**
 * The limits' statements, grouped across the questions a process is serving at once.
 *
 * A rate count lands on the row of the client's address and a reservation on the row of the
 * organization's month: under a burst (1,000 anonymous questions from one page, one network)
 * every question's statement queued on those rows' locks and on the database pool, one commit
 * after another, before its model call could start. Here one statement is on its way at a time;
 * the questions that arrive meanwhile are counted together in the next one (`rate_hits`,
 * `reserve_queries`, migration 20261129006600). Each question still gets exactly the count and
 * the refusal it would have had one statement at a time; a lone question pays one more turn of
 * the microtask queue and nothing else.
 *
 * Statements inside a caller's transaction are not grouped: they must see and hold its locks.
 */
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { Batcher } from '../providers/batcher.ts';
import { hit, type Count, type Hit } from './rates.ts';

/** Inputs of one grouped statement at most (a larger burst takes several). */
const MAX_GROUP = 1_000;

/** Runs one group at a time: whatever arrives while a group is out waits and goes in the next. */
function groupedRunner<I, O>(run: (inputs: I[]) => Promise<O[]>): Batcher<I, O> {
  let tail: Promise<unknown> = Promise.resolve();
  const exclusive = (fn: () => Promise<void>) => {
    const next = tail.then(fn, fn);
    tail = next.catch(() => undefined);
    return next;
  };
  return new Batcher<I, O>(exclusive, MAX_GROUP, MAX_GROUP, () => 1, run);
}

const inTransaction = (em: Em) => em.getTransactionContext() !== undefined;

/** Rate counts of concurrent requests in one `rate_hits` statement. */
export class GroupedRateHits {
  private readonly runner = groupedRunner<{ em: Em; hits: Hit[] }, Count[]>((requests) => countHits(requests[0]!.em, requests));

  /** Counts one hit on each key (the keys of one call differ), as `rates.hit` does. */
  hit(em: Em, hits: Hit[]): Promise<Count[]> {
    return inTransaction(em) ? hit(em, hits) : this.runner.add({ em, hits });
  }
}

async function countHits(em: Em, requests: { hits: Hit[] }[]): Promise<Count[][]> {
  const flat = requests.flatMap((r) => r.hits);
  const rows = await rawQuery<{ hits: number; retry_after: number }>(em, 'select hits, retry_after from rate_hits($1::text[], $2::integer[])', [
    flat.map((h) => h.key),
    flat.map((h) => h.windowSeconds),
  ]);
  if (rows.length !== flat.length) throw new Error(`rate_hits counted ${rows.length} of ${flat.length} hits`);
  let at = 0; // rows come in the order of the keys given
  return requests.map((r) =>
    r.hits.map((h) => {
      const row = rows[at++]!;
      const count = Number(row.hits);
      return { key: h.key, hits: count, limit: h.limit, remaining: Math.max(0, h.limit - count), retryAfterSeconds: Number(row.retry_after) };
    }),
  );
}

/** Query reservations of concurrent questions, one `reserve_queries` statement per organization and month. */
export class GroupedReservations {
  private readonly runner = groupedRunner<{ em: Em; organizationId: string; period: string }, boolean | Error>(async (requests) => {
    const groups = new Map<string, number[]>();
    requests.forEach((r, i) => {
      const key = `${r.organizationId}|${r.period}`;
      const group = groups.get(key);
      if (group) group.push(i);
      else groups.set(key, [i]);
    });
    const out = new Array<boolean | Error>(requests.length).fill(false);
    // Each organization's statement succeeds or fails for its own questions only.
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        const first = requests[indexes[0]!]!;
        try {
          const n = await reserveQueries(first.em, first.organizationId, first.period, indexes.length);
          indexes.forEach((i, place) => (out[i] = place < n)); // the earliest get what was left
        } catch (err) {
          for (const i of indexes) out[i] = err instanceof Error ? err : new Error(String(err));
        }
      }),
    );
    return out;
  });

  /** Reserves one query; false when the allowance is used up. */
  async reserve(em: Em, organizationId: string, period: string): Promise<boolean> {
    const result = inTransaction(em) ? (await reserveQueries(em, organizationId, period, 1)) === 1 : await this.runner.add({ em, organizationId, period });
    if (result instanceof Error) throw result;
    return result;
  }
}

/** Reserves up to n queries of the organization's month; returns how many were granted. */
async function reserveQueries(em: Em, organizationId: string, period: string, n: number): Promise<number> {
  const rows = await rawQuery<{ granted: number }>(em, 'select reserve_queries($1, $2, $3) as granted', [organizationId, period, n]);
  return Number(rows[0]?.granted ?? 0);
}
