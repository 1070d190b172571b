import { createHash } from 'node:crypto';
import type { Auth } from '../auth/auth.ts';
import { assertCanWriteDatastore, assertOwned, assertOwnedPart, requireMember, type Mode } from '../access.ts';
import { assertOriginAllowed } from '../origins.ts';
import type { Config } from '../config.ts';
import type { Em } from '../db/orm.ts';
import { Datastore } from '../datastores/datastore.entity.ts';
import { findById, findOr404 } from '../db/find.ts';
import { AppError, badInput, notFound } from '../errors.ts';
import { rawQuery } from '../db/raw.ts';
import { notification, type EventBus } from '../events/bus.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { newId } from '../ids.ts';
import { assertStoredTokensLeft } from '../limits/content.ts';
import type { ObjectStorage } from '../providers/storage.ts';
import type { Queue } from '../queue/queue.ts';
import { Datasource, DatasourceStatus, DatasourceType } from './datasource.entity.ts';
import { assertMove, movesInto } from './datasource.status.ts';
import { DATASOURCE_MIME_TYPES, extensionFor, mimeTypeFromFileName, normalizeMimeType } from './loaders/index.ts';
import { normalizeResyncSchedule, RESYNC_NONE } from './resync-schedule.ts';
import type { ResyncSchedules } from './resync.schedules.ts';

export const INGEST_QUEUE = 'ingest-datasource';
export const DATASOURCE_STATUS = 'datasource_status';

export interface IngestJobData {
  datasourceId: string;
}

/** What the datasourceStatusChanged subscription pushes. */
export interface StatusChange {
  id: string;
  datastoreId: string;
  organizationId: string;
  name: string;
  type: DatasourceType;
  status: DatasourceStatus;
  errorMessage: string | null;
  chunkCount: number;
  at: string;
}

/** What a status change may write beside the status. */
export interface StatusFields {
  /** Why processing failed; cleared (null) unless given. */
  errorMessage?: string | null;
  lastSynch?: Date;
  metadata?: Record<string, unknown>;
  hash?: string;
}

/**
 * One processing of a datasource by a worker, from markRunning on. Its outcome is written only
 * while the row is as that run left it (`updated_at` = `startedAt`, optimistic locking): a
 * request made meanwhile (pending) or a newer run of the same datasource has taken it over, and
 * that one decides, so a slow, stale run can never overwrite a newer result.
 */
export interface Run {
  startedAt: Date;
}

/**
 * A status change that a statement of its own writes (see chunk.store.ts): the new status, its
 * guard (the statuses it may come from, and the run that must still own the row) and the
 * notification it sends.
 */
export interface StatusWrite {
  status: DatasourceStatus;
  from: DatasourceStatus[];
  /** The row's updated_at that the write requires (the run's start), or null for none. */
  since: Date | null;
  notify: { channel: string; payload: string };
}

/**
 * A StatusWrite's guard as SQL, for a statement on `datasources`: the row's status is one of
 * `$<from>` (a text[]) and, unless `$<since>` is null, its updated_at is `$<since>` (the run's).
 */
export function guardSql(from: number, since: number): string {
  return `status = any($${from}::text[]) and ($${since}::timestamptz is null or updated_at = $${since}::timestamptz)`;
}

export interface UploadedFile {
  buffer: Buffer;
  fileName: string;
  mimeType: string;
}

const TEXT_MAX_CHARS = 5_000_000;

export class DatasourceService {
  constructor(
    private readonly config: Config,
    private readonly storage: ObjectStorage,
    private readonly queue: Queue,
    private readonly bus: EventBus,
    private readonly schedules?: ResyncSchedules,
  ) {}

  /** `write`: to change it. Throws UNAUTHENTICATED, NOT_FOUND (unknown, of another organization, or outside the key's datastores), FORBIDDEN (read-only key). */
  async get(em: Em, auth: Auth, id: string, mode: Mode = 'read'): Promise<Datasource> {
    const member = requireMember(auth);
    return assertOwnedPart(auth, await findOr404(em, Datasource, id, 'Datasource', { organization: member.organizationId }), 'Datasource', mode);
  }

  /** A datastore's datasources, newest first. Throws UNAUTHENTICATED, NOT_FOUND, BAD_USER_INPUT. */
  async list(
    em: Em,
    auth: Auth,
    args: { datastoreId: string; status?: DatasourceStatus | null; type?: DatasourceType | null; first: number; after?: string | null },
  ): Promise<Page<Datasource>> {
    const datastore = await this.ownDatastore(em, auth, args.datastoreId);
    const page = pageArgs(args.first, args.after);
    const rows = await em.find(
      Datasource,
      {
        datastore,
        ...(args.status ? { status: args.status } : {}),
        ...(args.type ? { type: args.type } : {}),
        ...(page.after ? { id: { $lt: page.after } } : {}),
      },
      { orderBy: { id: 'desc' }, limit: page.first + 1 },
    );
    return toPage(rows, page.first);
  }

  /**
   * A file sent in the request: stored, then queued. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key),
   * BAD_USER_INPUT (type), PAYLOAD_TOO_LARGE, PAYMENT_REQUIRED.
   */
  async createFromFile(
    em: Em,
    auth: Auth,
    datastoreId: string,
    file: UploadedFile | undefined,
    opts: { customId?: string | null; name?: string | null; type?: string } = {},
  ): Promise<Datasource> {
    requireMember(auth);
    if (opts.type !== undefined && opts.type !== DatasourceType.file) throw badInput('type must be "file" for an uploaded file.', { field: 'type' });
    if (!datastoreId) throw badInput('datastoreId is required.', { field: 'datastoreId' });
    if (!file) throw badInput('Send the file as the multipart part "file".', { field: 'file' });
    const datastore = await this.ownDatastore(em, auth, datastoreId, 'write');
    const mimeType = this.supportedType(file.mimeType, file.fileName);
    if (file.buffer.length > this.config.uploadMaxBytes) throw tooLarge(this.config.uploadMaxBytes);
    if (file.buffer.length === 0) throw badInput('The file is empty.', { field: 'file' });
    await assertStoredTokensLeft(em, datastore.organization.id);
    const fileName = cleanFileName(file.fileName || opts.name || 'upload');
    const id = newId();
    const storageKey = `datastores/${datastore.id}/${id}/${fileName}`;
    await this.storage.put(storageKey, file.buffer, mimeType);
    try {
      return await this.createAndQueue(em, {
        id,
        datastore,
        type: DatasourceType.file,
        name: opts.name?.trim() || fileName,
        mimeType,
        fileName,
        storageKey,
        size: file.buffer.length,
        customId: cleanCustomId(opts.customId),
      });
    } catch (err) {
      await this.storage.delete(storageKey).catch(() => {});
      throw err;
    }
  }

  /**
   * A datasource waiting for its file, and a pre-signed link to PUT it to (15 minutes). No
   * credentials needed for a public datastore; `origin` is held to its allowedOrigins.
   * Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key, origin), BAD_USER_INPUT, PAYMENT_REQUIRED.
   */
  async createUploadLink(em: Em, auth: Auth, datastoreId: string, input: { type: string; fileName?: string | null }, origin?: string): Promise<{ datasource: Datasource; link: string; expiresAt: Date; headers: Record<string, string> }> {
    const datastore = await this.writableDatastore(em, auth, datastoreId, { publicAllowed: true, origin });
    const mimeType = this.supportedType(input.type, input.fileName ?? undefined, 'type');
    await assertStoredTokensLeft(em, datastore.organization.id);
    const fileName = cleanFileName(input.fileName || `upload${extensionFor(mimeType)}`);
    const id = newId();
    const storageKey = `datastores/${datastore.id}/${id}/${fileName}`;
    const datasource = em.create(Datasource, {
      id,
      organization: datastore.organization,
      datastore,
      type: DatasourceType.file,
      name: fileName,
      mimeType,
      fileName,
      storageKey,
    });
    await em.flush();
    const link = await this.storage.createUploadLink(storageKey, { contentType: mimeType, maxBytes: this.config.uploadMaxBytes });
    return { datasource, link: link.url, expiresAt: link.expiresAt, headers: link.headers };
  }

  /**
   * Queues processing of a file uploaded through a link (or re-processes a stored one).
   * Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key), BAD_USER_INPUT (nothing uploaded), PAYLOAD_TOO_LARGE.
   */
  async processUpload(em: Em, auth: Auth, datastoreId: string, datasourceId: string): Promise<Datasource> {
    const datastore = await this.ownDatastore(em, auth, datastoreId, 'write');
    const ds = await findById(em, Datasource, datasourceId, { datastore });
    if (!ds || ds.type !== DatasourceType.file || !ds.storageKey) throw notFound('Datasource');
    const stored = await this.storage.stat(ds.storageKey);
    if (!stored) throw badInput('Nothing was uploaded to this datasource yet: PUT the file to the link first.', { field: 'id' });
    if (stored.size > this.config.uploadMaxBytes) {
      await this.storage.delete(ds.storageKey);
      throw tooLarge(this.config.uploadMaxBytes);
    }
    ds.size = stored.size;
    return this.requeue(em, ds, ds.status === DatasourceStatus.unsynched ? DatasourceStatus.unsynched : DatasourceStatus.pending);
  }

  /** A web page or a whole site. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key), BAD_USER_INPUT, PAYMENT_REQUIRED. */
  async createWeb(em: Em, auth: Auth, input: { datastoreId: string; type: DatasourceType; name?: string | null; config: Record<string, unknown>; customId?: string | null; resyncSchedule?: string | null }): Promise<Datasource> {
    const datastore = await this.ownDatastore(em, auth, input.datastoreId, 'write');
    const config = webConfig(input.type, input.config);
    const resyncSchedule = normalizeResyncSchedule(input.resyncSchedule);
    await assertStoredTokensLeft(em, datastore.organization.id);
    const id = newId();
    // The schedule before the row: one left without its row removes itself when it fires (resync.schedules.ts).
    await this.applySchedule({ datasourceId: id }, resyncSchedule);
    try {
      return await this.createAndQueue(em, {
        id,
        datastore,
        type: input.type,
        name: input.name?.trim() || String(config.sitemap ?? config.source_url),
        config,
        customId: cleanCustomId(input.customId),
        resyncSchedule,
      });
    } catch (err) {
      if (resyncSchedule !== RESYNC_NONE) await this.schedules?.remove({ datasourceId: id }).catch(() => {});
      throw err;
    }
  }

  /**
   * Renames a datasource or changes the re-sync schedule of a web page or site.
   * Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key), BAD_USER_INPUT (a schedule that
   * is malformed, or on a datasource that is not a web page or site of its own).
   */
  async update(em: Em, auth: Auth, id: string, input: { name?: string | null; resyncSchedule?: string | null }): Promise<Datasource> {
    const ds = await this.get(em, auth, id, 'write');
    const resyncSchedule = input.resyncSchedule == null ? null : normalizeResyncSchedule(input.resyncSchedule);
    if (resyncSchedule !== null && resyncSchedule !== RESYNC_NONE) assertSchedulable(ds);
    const name = input.name == null ? null : input.name.trim();
    if (name === '') throw badInput('name must not be empty.', { field: 'name' });
    const scheduleChanged = resyncSchedule !== null && resyncSchedule !== ds.resyncSchedule;
    // A schedule is registered before the row says so and removed after, so that a failure in
    // between leaves a schedule that removes itself rather than a row whose schedule never fires.
    if (scheduleChanged && resyncSchedule !== RESYNC_NONE) await this.applySchedule({ datasourceId: ds.id }, resyncSchedule);
    // Not a flush: updated_at is a running job's claim on the row (Run), and a rename must not take it away.
    await rawQuery(em, 'update datasources set name = coalesce($2, name), resync_schedule = coalesce($3, resync_schedule) where id = $1', [ds.id, name, resyncSchedule]);
    if (scheduleChanged && resyncSchedule === RESYNC_NONE) await this.applySchedule({ datasourceId: ds.id }, resyncSchedule);
    return em.findOneOrFail(Datasource, ds.id, { refresh: true });
  }

  /**
   * A scheduled re-sync (resync.schedules.ts): processed again like `resync`, unless it is already
   * waiting for or in processing. False when left alone.
   */
  async requeueScheduled(em: Em, ds: Datasource): Promise<boolean> {
    if ([DatasourceStatus.unsynched, DatasourceStatus.pending, DatasourceStatus.running].includes(ds.status)) return false;
    await this.requeue(em, ds, DatasourceStatus.pending);
    return true;
  }

  /** A raw text document. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key), BAD_USER_INPUT, PAYMENT_REQUIRED. */
  async createText(em: Em, auth: Auth, input: { datastoreId: string; name: string; text: string; metadata?: Record<string, unknown> | null; customId?: string | null; resyncSchedule?: string | null }): Promise<Datasource> {
    const datastore = await this.ownDatastore(em, auth, input.datastoreId, 'write');
    const text = checkText(input.text);
    if (normalizeResyncSchedule(input.resyncSchedule) !== RESYNC_NONE) throw badInput('resyncSchedule applies to web_page and web_site datasources.', { field: 'resyncSchedule' });
    await assertStoredTokensLeft(em, datastore.organization.id);
    return this.createAndQueue(em, {
      datastore,
      type: DatasourceType.text,
      name: input.name.trim() || 'Untitled',
      content: text,
      size: Buffer.byteLength(text),
      metadata: input.metadata ?? {},
      customId: cleanCustomId(input.customId),
    });
  }

  /**
   * Replaces a document's text (and name, metadata) and re-embeds it. No credentials needed
   * for a public datastore; `origin` is held to its allowedOrigins. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key, origin), BAD_USER_INPUT.
   */
  async updateText(em: Em, auth: Auth, datastoreId: string, input: { id: string; text: string; name?: string | null; metadata?: Record<string, unknown> | null }, origin?: string): Promise<Datasource> {
    const datastore = await this.writableDatastore(em, auth, datastoreId, { publicAllowed: true, origin });
    const ds = await findById(em, Datasource, input.id, { datastore });
    if (!ds || (ds.type !== DatasourceType.text && ds.type !== DatasourceType.file)) throw notFound('Document');
    const text = checkText(input.text);
    const oldKey = ds.storageKey;
    ds.type = DatasourceType.text;
    ds.content = text;
    ds.size = Buffer.byteLength(text);
    ds.storageKey = null;
    ds.mimeType = 'text/plain';
    if (input.name?.trim()) ds.name = input.name.trim();
    if (input.metadata) ds.metadata = input.metadata;
    const updated = await this.requeue(em, ds, DatasourceStatus.pending);
    if (oldKey) await this.storage.delete(oldKey).catch(() => {});
    return updated;
  }

  /** Processes a datasource again (a site re-crawls). Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key). */
  async resync(em: Em, auth: Auth, id: string): Promise<Datasource> {
    const ds = await this.get(em, auth, id, 'write');
    return this.requeue(em, ds, DatasourceStatus.pending);
  }

  /**
   * resync() of several datasources, all or none: every one is read and checked in one query before
   * any is queued, and all are queued in one transaction (one write of their rows, then each job and
   * notification), in the order of `ids`. Throws UNAUTHENTICATED, NOT_FOUND (naming the first id the
   * caller cannot see), FORBIDDEN (read-only key).
   */
  async resyncMany(em: Em, auth: Auth, ids: string[]): Promise<Datasource[]> {
    const member = requireMember(auth);
    if (!ids.length) return [];
    const found = new Map((await em.find(Datasource, { id: { $in: ids }, organization: member.organizationId })).map((d) => [d.id, d]));
    const targets = ids.map((id) => assertOwnedPart(auth, found.get(id) ?? null, 'Datasource', 'write'));
    await this.requeueAll(em, targets, DatasourceStatus.pending);
    return targets;
  }

  /** Removes the datasource, its chunks, its file, and the pages of a site. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key). */
  async delete(em: Em, auth: Auth, id: string): Promise<Datasource> {
    const ds = await this.get(em, auth, id, 'write');
    const children = ds.type === DatasourceType.web_site ? await em.find(Datasource, { groupId: ds.id }) : [];
    const keys = [ds, ...children].map((d) => d.storageKey).filter((k): k is string => !!k);
    await em.transactional(async (tx) => {
      await tx.nativeDelete(Datasource, { id: { $in: [ds.id, ...children.map((c) => c.id)] } });
    });
    await Promise.all(keys.map((k) => this.storage.delete(k).catch(() => {})));
    // Best effort: a schedule that outlives its row removes itself when it fires.
    if (ds.resyncSchedule !== RESYNC_NONE) await this.schedules?.remove({ datasourceId: ds.id }).catch(() => {});
    return ds;
  }

  private async applySchedule(target: { datasourceId: string }, schedule: string): Promise<void> {
    if (!this.schedules) {
      if (schedule !== RESYNC_NONE) throw new Error('Re-sync schedules need the queue (DatasourceService built without ResyncSchedules).');
      return;
    }
    await this.schedules.apply(target, schedule);
  }

  // ---- Status: every change is checked against STATUS_MOVES (datasource.status.ts) here ----

  /**
   * Moves a loaded datasource to `to`, writes it with `fields` (the error message cleared unless
   * given) and announces it; inside a transaction both land on its commit.
   * Throws IllegalStatusMove (a bug: no client request can make an illegal move).
   */
  async transition(em: Em, ds: Datasource, to: DatasourceStatus, fields: StatusFields = {}): Promise<void> {
    await this.transitionAll(em, [ds], to, fields);
  }

  /** transition() of several datasources: one write of their rows, then each one's announcement. */
  private async transitionAll(em: Em, targets: Datasource[], to: DatasourceStatus, fields: StatusFields = {}): Promise<void> {
    for (const ds of targets) this.move(em, ds, to, fields);
    await em.flush();
    for (const ds of targets) await this.announce(em, ds);
  }

  /** transition() without its flush and announcement, for a caller that flushes many rows at once. */
  private move(em: Em, ds: Datasource, to: DatasourceStatus, fields: StatusFields = {}): void {
    assertMove(ds.id, ds.status, to);
    ds.status = to;
    ds.errorMessage = fields.errorMessage ?? null;
    if (fields.lastSynch) ds.lastSynch = fields.lastSynch;
    if (fields.metadata) ds.metadata = fields.metadata;
    if (fields.hash) ds.hash = fields.hash;
    em.persist(ds);
  }

  /**
   * `to`, as `run`'s outcome, for a statement that writes it together with other rows
   * (chunk.store.ts): its guard, and its notification, which reports `changes` beside the status.
   */
  statusWrite(ds: Datasource, run: Run | null, to: DatasourceStatus, changes: Partial<Pick<StatusChange, 'errorMessage' | 'chunkCount' | 'name'>> = {}): StatusWrite {
    return {
      status: to,
      from: movesInto(to),
      since: run?.startedAt ?? null,
      notify: this.statusNotification(ds, { errorMessage: null, ...changes, status: to }),
    };
  }

  /** A worker took the datasource: its run. Leaves `ds` as loaded. Null when the datasource is gone. */
  async markRunning(em: Em, ds: Datasource): Promise<Run | null> {
    const startedAt = new Date();
    return (await this.settle(em, ds, null, DatasourceStatus.running, null, startedAt)) ? { startedAt } : null;
  }

  /**
   * The run found the content its chunks were made from (the same text, or a 304 answer): synched
   * again without touching the chunks, with the validators of this fetch. One guarded statement,
   * announced on commit. False as for markFailed.
   */
  async markUnchanged(em: Em, ds: Datasource, run: Run, validators: { etag: string | null; lastModified: string | null }): Promise<boolean> {
    const write = this.statusWrite(ds, run, DatasourceStatus.synched, { chunkCount: ds.chunkCount });
    const rows = await rawQuery(
      em,
      `with kept as (
         update datasources set status = $2, error_message = null, last_synch = $3, updated_at = $3, etag = $4, last_modified = $5
          where id = $1 and ${guardSql(6, 7)} returning id
       )
       select pg_notify($8, $9) from kept`,
      [ds.id, write.status, new Date(), validators.etag, validators.lastModified, write.from, write.since, write.notify.channel, write.notify.payload],
    );
    return rows.length > 0;
  }

  /** The run failed for good. False when the datasource is gone or another run or request took it over. */
  markFailed(em: Em, ds: Datasource, run: Run, message: string): Promise<boolean> {
    return this.settle(em, ds, run, DatasourceStatus.error, message);
  }

  /**
   * The run stalled and its job will be tried again: still `running`, with the reason until the
   * next attempt starts, and no longer the run's (a new updated_at), so the stuck run's outcome,
   * should it ever come, is refused. False as for markFailed.
   */
  markAbandoned(em: Em, ds: Datasource, run: Run, reason: string): Promise<boolean> {
    return this.settle(em, ds, run, DatasourceStatus.running, reason);
  }

  /** No job is left that would process it (stalled.ts): `error` with the reason. False when it moved on meanwhile. */
  markStalled(em: Em, ds: Datasource, message: string): Promise<boolean> {
    return this.settle(em, ds, null, DatasourceStatus.error, message);
  }

  /** Storing the run's document would pass the organization's stored-token limit. False as for markFailed. */
  markOverLimit(em: Em, ds: Datasource, run: Run, message: string): Promise<boolean> {
    return this.settle(em, ds, run, DatasourceStatus.usage_limit_reached, message);
  }

  /**
   * A crawl's result, in one transaction: each page a web_page datasource of the site (new ones
   * created, known ones asked for again, vanished ones deleted), each queued, and the site
   * synched. `startAfterSeconds[i]` delays the job of `urls[i]` (a site's Crawl-delay). False,
   * writing nothing, when the site is gone or another run or request took it over.
   */
  async replaceSitePages(em: Em, site: Datasource, run: Run, urls: string[], startAfterSeconds: number[] = []): Promise<boolean> {
    return em.transactional(async (tx) => {
      const guard = [movesInto(DatasourceStatus.synched), run.startedAt];
      const [locked] = await rawQuery(tx, `select id from datasources where id = $1 and ${guardSql(2, 3)} for update`, [site.id, ...guard]);
      if (!locked) return false;
      const row = await tx.findOneOrFail(Datasource, site.id, { refresh: true });
      const children = await tx.find(Datasource, { groupId: site.id });
      const byUrl = new Map(children.map((c) => [String(c.config.source_url), c]));
      const keep = new Set(urls);
      const gone = children.filter((c) => !keep.has(String(c.config.source_url)));
      if (gone.length) await tx.nativeDelete(Datasource, { id: { $in: gone.map((c) => c.id) } });
      // Every row changed or created (ids come from newId), written by one flush; then the jobs and announcements.
      const pages = urls.map((url) => {
        const known = byUrl.get(url);
        if (known) {
          this.move(tx, known, DatasourceStatus.pending);
          return known;
        }
        return tx.create(Datasource, {
          organization: row.organization,
          datastore: row.datastore,
          type: DatasourceType.web_page,
          name: url,
          groupId: row.id,
          config: { source_url: url },
          customId: row.customId ?? null,
          status: DatasourceStatus.unsynched,
        } as never);
      });
      this.move(tx, row, DatasourceStatus.synched, {
        lastSynch: new Date(),
        metadata: { ...row.metadata, pages: urls.length },
        hash: contentHash(urls.join('\n')),
      });
      await tx.flush();
      for (const [i, page] of pages.entries()) {
        await this.announce(tx, page);
        const startAfter = startAfterSeconds[i] ?? 0;
        await this.queue.send(tx, INGEST_QUEUE, { datasourceId: page.id } satisfies IngestJobData, startAfter > 0 ? { startAfter } : {});
      }
      await this.announce(tx, row);
      return true;
    });
  }

  /**
   * One statement writes `to` and announces it (its own transaction; the notification goes out
   * on commit), guarded by the statuses `to` may come from and by `run`.
   */
  private async settle(em: Em, ds: Datasource, run: Run | null, to: DatasourceStatus, errorMessage: string | null, at = new Date()): Promise<boolean> {
    const write = this.statusWrite(ds, run, to, { errorMessage });
    const rows = await rawQuery(
      em,
      `with moved as (
         update datasources set status = $2, error_message = $3, updated_at = $4
          where id = $1 and ${guardSql(5, 8)} returning id
       )
       select pg_notify($6, $7) from moved`,
      [ds.id, to, errorMessage, at, write.from, write.notify.channel, write.notify.payload, write.since],
    );
    return rows.length > 0;
  }

  /** Tells every process (the subscription listens) how `ds` is now. */
  private async announce(em: Em, ds: Datasource): Promise<void> {
    const { channel, payload } = this.statusNotification(ds);
    await this.bus.publish(em, channel, payload);
  }

  /** The notification of `ds`'s status as it will be once `changes` are written. */
  private statusNotification(ds: Datasource, changes: Partial<Pick<StatusChange, 'status' | 'errorMessage' | 'chunkCount' | 'name'>> = {}): { channel: string; payload: string } {
    const change: StatusChange = {
      id: ds.id,
      datastoreId: ds.datastore.id,
      organizationId: ds.organization.id,
      name: (changes.name ?? ds.name).slice(0, 200),
      type: ds.type,
      status: changes.status ?? ds.status,
      errorMessage: (changes.errorMessage !== undefined ? changes.errorMessage : ds.errorMessage)?.slice(0, 500) ?? null,
      chunkCount: changes.chunkCount ?? ds.chunkCount,
      at: new Date().toISOString(),
    };
    return notification(DATASOURCE_STATUS, JSON.stringify(change));
  }

  /** A datastore the caller may read (subscriptions). Throws NOT_FOUND. */
  async readableDatastore(em: Em, auth: Auth, id: string): Promise<Datastore> {
    requireMember(auth);
    return this.ownDatastore(em, auth, id);
  }

  private async createAndQueue(em: Em, data: Partial<Datasource> & { datastore: Datastore; type: DatasourceType; name: string }): Promise<Datasource> {
    // The row and its job commit together: a crash can lose neither.
    const ds = await em.transactional(async (tx) => {
      const created = tx.create(Datasource, { ...data, organization: data.datastore.organization, status: DatasourceStatus.unsynched } as never);
      await tx.flush();
      await this.queue.send(tx, INGEST_QUEUE, { datasourceId: created.id } satisfies IngestJobData);
      await this.announce(tx, created);
      return created;
    });
    return ds;
  }

  private async requeue(em: Em, ds: Datasource, status: DatasourceStatus): Promise<Datasource> {
    await this.requeueAll(em, [ds], status);
    return ds;
  }

  /** Moves the datasources to `status` and queues a job for each, in one transaction (one write of their rows). */
  private async requeueAll(em: Em, targets: Datasource[], status: DatasourceStatus): Promise<void> {
    await em.transactional(async (tx) => {
      await this.transitionAll(tx, targets, status);
      for (const ds of targets) await this.queue.send(tx, INGEST_QUEUE, { datasourceId: ds.id } satisfies IngestJobData);
    });
  }

  private async ownDatastore(em: Em, auth: Auth, id: string, mode: Mode = 'read'): Promise<Datastore> {
    return assertOwned(auth, await findById(em, Datastore, id), 'Datastore', mode);
  }

  /** Public datastores accept some writes without credentials, as the REST interface says. */
  private async writableDatastore(em: Em, auth: Auth, id: string, opts: { publicAllowed: boolean; origin?: string }): Promise<Datastore> {
    const datastore = assertCanWriteDatastore(auth, await findById(em, Datastore, id), opts);
    assertOriginAllowed(auth, opts.origin, datastore, 'Datastore');
    return datastore;
  }

  private supportedType(type: string | undefined, fileName?: string, field = 'file'): string {
    const declared = type ? normalizeMimeType(type) : '';
    const mime = DATASOURCE_MIME_TYPES.includes(declared) ? declared : fileName && (!declared || declared === 'application/octet-stream') ? mimeTypeFromFileName(fileName) : null;
    if (!mime || !DATASOURCE_MIME_TYPES.includes(mime)) {
      throw badInput(`Unsupported file type ${JSON.stringify(type || fileName || '')}. Supported: ${DATASOURCE_MIME_TYPES.join(', ')}.`, {
        field,
        supported: DATASOURCE_MIME_TYPES,
      });
    }
    return mime;
  }
}

function tooLarge(limit: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `The file is larger than the limit of ${limit} bytes.`, { limit });
}

function checkText(text: string): string {
  if (typeof text !== 'string' || !text.trim()) throw badInput('text must not be empty.', { field: 'text' });
  if (text.length > TEXT_MAX_CHARS) throw new AppError('PAYLOAD_TOO_LARGE', `text is longer than ${TEXT_MAX_CHARS} characters.`, { field: 'text' });
  return text;
}

function cleanCustomId(customId: string | null | undefined): string | null {
  if (customId == null || customId === '') return null;
  if (customId.length > 200) throw badInput('custom_id must be at most 200 characters.', { field: 'custom_id' });
  return customId;
}

/** A file name safe as one storage key segment; keeps the extension. */
export function cleanFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base.replace(/[\x00-\x1f\x7f]/g, '').replace(/\.{2,}/g, '.').replace(/^\.+/, '').trim();
  const short = Buffer.byteLength(cleaned) > 200 ? cleaned.slice(-100) : cleaned;
  return short || 'upload';
}

/** Only a web page or site of its own has a schedule: a page found by a site is re-read with it. */
function assertSchedulable(ds: Datasource): void {
  if ((ds.type !== DatasourceType.web_page && ds.type !== DatasourceType.web_site) || ds.groupId) {
    throw badInput('resyncSchedule applies to web_page and web_site datasources; a page found by a site is re-read with its site.', { field: 'resyncSchedule' });
  }
}

function webConfig(type: DatasourceType, config: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const url = (v: unknown, field: string) => {
    if (typeof v !== 'string' || !/^https?:\/\//i.test(v)) throw badInput(`config.${field} must be an http(s) URL.`, { field: `config.${field}` });
    try {
      return new URL(v).toString();
    } catch {
      throw badInput(`config.${field} must be an http(s) URL.`, { field: `config.${field}` });
    }
  };
  const c = config ?? {};
  if (type === DatasourceType.web_page) return { source_url: url(c.source_url, 'source_url') };
  if (type === DatasourceType.web_site) {
    if (c.sitemap != null) return { sitemap: url(c.sitemap, 'sitemap') };
    if (c.source_url != null) return { source_url: url(c.source_url, 'source_url') };
    throw badInput('A web_site needs config.sitemap or config.source_url.', { field: 'config' });
  }
  throw badInput('type must be web_page or web_site here.', { field: 'type' });
}

export function contentHash(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}
