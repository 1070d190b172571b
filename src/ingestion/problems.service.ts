/**
 * What a person sees of stalled and failed work, and what notices it: an organization's
 * datasources that failed or are stuck, with the reason; a retry of one, some or all of them; and
 * the sweep that fails stuck ones with their reason (stalled.ts), so none stays in progress forever.
 */
import type { Auth } from '../auth/auth.ts';
import { requireMember, scopeList } from '../access.ts';
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { badInput } from '../errors.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { isId } from '../ids.ts';
import type { Logger } from '../logger.ts';
import { Datasource } from './datasource.entity.ts';
import { INGEST_QUEUE, type DatasourceService } from './datasource.service.ts';
import { problemsSql, reasonOf, sweepSql, type StalledRow } from './stalled.ts';

export interface DatasourceProblem {
  id: string;
  datasource: Datasource;
  /** Why it is not done: its error message, or what became of its job. */
  reason: string;
  /** In progress by its status, with no job left that would finish it (the sweep will fail it). */
  stuck: boolean;
}

/** How many problems one retry of "all" queues again. */
export const RETRY_ALL_MAX = 500;

export class DatasourceProblems {
  constructor(private readonly datasources: DatasourceService) {}

  /** Failed and stuck datasources of the caller's organization (a scoped key: of its datastores), newest first. Throws UNAUTHENTICATED, BAD_USER_INPUT. */
  async list(em: Em, auth: Auth, args: { first: number; after?: string | null }): Promise<Page<DatasourceProblem>> {
    const member = requireMember(auth);
    const page = pageArgs(args.first, args.after);
    const rows = await rawQuery<StalledRow>(em, problemsSql(), [INGEST_QUEUE, member.organizationId, scopeList(auth, 'Datastore'), page.after, page.first + 1]);
    const entities = new Map((await em.find(Datasource, { id: { $in: rows.map((r) => r.id) } })).map((d) => [d.id, d]));
    const problems = rows.filter((r) => entities.has(r.id)).map((r) => ({ id: r.id, datasource: entities.get(r.id)!, reason: reasonOf(r), stuck: r.stuck }));
    return toPage(problems, page.first);
  }

  /**
   * Processes the given datasources again, or with no ids every problem of the organization (up
   * to RETRY_ALL_MAX). Throws UNAUTHENTICATED, NOT_FOUND (a datasource the caller cannot see: none is
   * queued), FORBIDDEN (read-only key), BAD_USER_INPUT.
   */
  async retry(em: Em, auth: Auth, ids?: string[] | null): Promise<Datasource[]> {
    requireMember(auth);
    let targets: string[];
    if (ids) {
      if (ids.length === 0 || ids.length > 100) throw badInput('ids must list 1 to 100 datasources (or be left out to retry every problem).', { field: 'ids' });
      if (!ids.every(isId)) throw badInput('ids must be datasource ids.', { field: 'ids' });
      targets = [...new Set(ids)];
    } else {
      targets = [];
      let after: string | null = null;
      while (targets.length < RETRY_ALL_MAX) {
        const page: Page<DatasourceProblem> = await this.list(em, auth, { first: 100, after });
        targets.push(...page.nodes.map((p) => p.id));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      targets = targets.slice(0, RETRY_ALL_MAX);
    }
    // Every one checked before any is queued, and all queued in one transaction: a refusal changes nothing.
    return this.datasources.resyncMany(em, auth, targets);
  }

  /** Fails stuck datasources untouched for `graceSeconds`, each with its reason; returns how many. */
  async sweep(em: Em, graceSeconds: number, max = 200): Promise<number> {
    const rows = await rawQuery<StalledRow>(em, sweepSql(), [INGEST_QUEUE, graceSeconds, max, max * 5]);
    if (!rows.length) return 0;
    const entities = await em.find(Datasource, { id: { $in: rows.map((r) => r.id) } }, { populate: ['datastore'] });
    let failed = 0;
    for (const ds of entities) {
      const row = rows.find((r) => r.id === ds.id)!;
      if (await this.datasources.markStalled(em.fork(), ds, reasonOf(row))) failed++;
    }
    return failed;
  }
}

/** Runs the sweep every `seconds` (0: never); returns its stop. */
export function startStalledSweep(problems: DatasourceProblems, fork: () => Em, seconds: number, logger: Logger): () => Promise<void> {
  if (seconds <= 0) return async () => {};
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    running ??= problems
      .sweep(fork(), seconds)
      .then((n) => n && logger.warn('stalled datasources failed', { count: n }))
      .catch((error: unknown) => logger.warn('stalled-work sweep failed', { error }))
      .finally(() => (running = null));
  }, seconds * 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
