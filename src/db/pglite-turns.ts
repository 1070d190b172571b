import type { PGlite } from '@electric-sql/pglite';

/**
 * Gives the event loop a turn before each statement of the embedded database.
 *
 * PGlite runs a statement synchronously on the main thread, and hands its one connection from
 * one waiting statement to the next by promise callbacks (microtasks), which all run before any
 * timer or socket is looked at. A queue of waiting statements (ingestion workers, pg-boss, the
 * requests that queue documents) therefore ran back to back as one block: while 200 documents
 * were ingested (bench:queue with BENCH_PROBE) the event loop stood still for up to 3.9 s at a
 * time although no statement took more than 0.26 s, and a GET /agents/{id} that runs no
 * statement at all (caller and agent cached) waited out the whole block before its socket was
 * even read. Each statement now starts in a turn of its own (setImmediate), after the I/O that
 * arrived meanwhile: a request that needs no database waits for one statement at most. The order
 * of statements and what a transaction holds are unchanged; the cost is one loop turn per
 * statement, which did not lower the ingestion rate measured (docs/benchmarks.md, bench:queue).
 */
export function yieldBeforeStatements(pglite: PGlite): void {
  const runExclusive = pglite._runExclusiveQuery.bind(pglite);
  pglite._runExclusiveQuery = <T>(fn: () => Promise<T>): Promise<T> =>
    runExclusive(async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      return fn();
    });
}
