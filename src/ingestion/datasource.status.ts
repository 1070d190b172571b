/**
 * The life of a datasource, as a table of allowed moves. DatasourceService is the only writer of
 * a datasource's status and checks every change against this table; a row written in one SQL
 * statement (a job starting, chunks stored) carries the same check in its WHERE clause
 * (`status = any(from)`), so a job whose datasource was re-requested meanwhile writes nothing.
 *
 * A datasource is born `unsynched` (its job queued with it). Requests from clients (re-process,
 * new text, an uploaded file) only ever move to `pending` (or keep `unsynched`), which every state
 * allows: no client can cause an illegal move, so an illegal one is a bug and throws a plain Error.
 */
import { DatasourceStatus as S } from './datasource.entity.ts';

/** The statuses a job's outcome may leave: only a datasource being processed gets one. */
const OUTCOMES = [S.synched, S.error, S.usage_limit_reached] as const;

/**
 * from -> the statuses it may move to.
 * - `pending` from anywhere: a client asked for processing again (a site re-crawl re-queues its pages).
 * - `running` from anywhere: a worker took a job. From `running`, a retry of a job whose worker died
 *   or failed transiently; from an outcome, the second of two jobs queued by two requests.
 * - an outcome only from `running`; and `error` from `unsynched` and `pending` too: the stalled-work
 *   sweep (stalled.ts) found no job left that would ever take it.
 * - `unsynched` -> `unsynched`: the file of an upload link arrived and is queued; it was never synched.
 */
export const STATUS_MOVES: Readonly<Record<S, readonly S[]>> = Object.freeze({
  [S.unsynched]: [S.unsynched, S.pending, S.running, S.error],
  [S.pending]: [S.pending, S.running, S.error],
  [S.running]: [S.pending, S.running, ...OUTCOMES],
  [S.synched]: [S.pending, S.running],
  [S.error]: [S.pending, S.running],
  [S.usage_limit_reached]: [S.pending, S.running],
});

export function canMove(from: S, to: S): boolean {
  return STATUS_MOVES[from].includes(to);
}

/** The statuses from which `to` may be reached, for a statement's `status = any(...)` guard. */
export function movesInto(to: S): S[] {
  return (Object.keys(STATUS_MOVES) as S[]).filter((from) => canMove(from, to));
}

/** A status change the table forbids: a bug in our code, never the client's doing. */
export class IllegalStatusMove extends Error {
  constructor(
    readonly datasourceId: string,
    readonly from: S,
    readonly to: S,
  ) {
    super(`Datasource ${datasourceId} cannot move from ${from} to ${to}.`);
    this.name = 'IllegalStatusMove';
  }
}

export function assertMove(datasourceId: string, from: S, to: S): void {
  if (!canMove(from, to)) throw new IllegalStatusMove(datasourceId, from, to);
}
