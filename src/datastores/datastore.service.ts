import type { Auth } from '../auth/auth.ts';
import { assertCanChange, assertCanRead, assertCanUse, requireCreate, requireMember, scopeList } from '../access.ts';
import { findById } from '../db/find.ts';
import { rawQuery } from '../db/raw.ts';
import type { Embedder } from '../providers/embeddings.ts';
import type { ObjectStorage } from '../providers/storage.ts';
import type { Em } from '../db/orm.ts';
import { AppError, badInput } from '../errors.ts';
import { isId } from '../ids.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { TtlCache } from '../cache.ts';
import type { EventBus } from '../events/bus.ts';
import { Datastore } from './datastore.entity.ts';
import type { CreateDatastoreInput, UpdateDatastoreInput } from './datastore.inputs.ts';
import { assertOriginAllowed, normalizeAllowedOrigins } from '../origins.ts';
import { DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE } from '../ingestion/chunker.ts';
import type { ModelChanges } from './model-change.ts';
import { normalizeResyncSchedule, RESYNC_NONE } from '../ingestion/resync-schedule.ts';
import type { ResyncSchedules } from '../ingestion/resync.schedules.ts';

export const DATASTORE_CHANGED = 'datastore_changed';

export class DatastoreService {
  /**
   * What a query needs of a datastore (id, organization, visibility, vector size), by id:
   * public datastores are queried by every widget. Changes are announced on the event bus.
   */
  private readonly forQueries = new TtlCache<string, Datastore>(60_000);

  constructor(
    private readonly embedder: Pick<Embedder, 'provider' | 'model' | 'dimension'>,
    private readonly storage: Pick<ObjectStorage, 'delete'>,
    private readonly bus: EventBus,
    /** Changes of embedding model (absent: updateDatastore refuses embeddingModel). */
    private readonly modelChanges?: ModelChanges,
    private readonly schedules?: ResyncSchedules,
  ) {}

  async init(): Promise<void> {
    await this.bus.subscribe(DATASTORE_CHANGED, (id) => this.forQueries.delete(id));
  }

  /**
   * For a similarity query: a cached read-only snapshot. With the `Origin` of a browser's request,
   * also refuses a page the datastore's allowedOrigins leave out (src/origins.ts).
   * Throws UNAUTHENTICATED (no credentials, and not public), NOT_FOUND (unknown, or private to
   * another organization), FORBIDDEN (origin).
   */
  async getForQuery(em: Em, auth: Auth, id: string, origin?: string): Promise<Datastore> {
    const [datastore] = isId(id) ? await this.snapshots(em, [id]) : [];
    const usable = assertCanUse(auth, datastore ?? null, 'Datastore');
    assertOriginAllowed(auth, origin, usable, 'Datastore');
    return usable;
  }

  /** For an agent's answer: cached snapshots of the organization's datastores among these ids (others left out). */
  async ownedForQuery(em: Em, organizationId: string, ids: readonly string[]): Promise<Datastore[]> {
    // An agent answers only from its own organization's datastores, whatever their visibility.
    return (await this.snapshots(em, ids)).filter((d) => d.organization.id === organizationId);
  }

  /** Snapshots by id, from the cache or one read for those it lacks; unknown ids are left out. */
  private async snapshots(em: Em, ids: readonly string[]): Promise<Datastore[]> {
    const missing = ids.filter((id) => !this.forQueries.get(id));
    if (missing.length) {
      for (const found of await em.find(Datastore, { id: { $in: missing } })) {
        this.forQueries.set(
          found.id,
          Object.freeze({ id: found.id, organization: { id: found.organization.id }, visibility: found.visibility, embeddingModel: found.embeddingModel, embeddingDimension: found.embeddingDimension, allowedOrigins: Object.freeze([...found.allowedOrigins]) }) as unknown as Datastore,
        );
      }
    }
    return ids.map((id) => this.forQueries.get(id)).filter((d): d is Datastore => d !== undefined);
  }

  /** Throws NOT_FOUND (unknown, or private to another organization). */
  async get(em: Em, auth: Auth, id: string): Promise<Datastore> {
    return assertCanRead(auth, await findById(em, Datastore, id), 'Datastore');
  }

  /** The caller's organization's datastores, newest first. Throws UNAUTHENTICATED, BAD_USER_INPUT. */
  async list(em: Em, auth: Auth, first: number, after?: string | null): Promise<Page<Datastore>> {
    const member = requireMember(auth);
    const page = pageArgs(first, after);
    const listed = scopeList(auth, 'Datastore');
    const id = { ...(listed ? { $in: [...listed] } : {}), ...(page.after ? { $lt: page.after } : {}) };
    const rows = await em.find(
      Datastore,
      { organization: member.organizationId, ...(listed || page.after ? { id } : {}) },
      { orderBy: { id: 'desc' }, limit: page.first + 1 },
    );
    return toPage(rows, page.first);
  }

  /** Throws UNAUTHENTICATED, FORBIDDEN (a key limited to some datastores, or read-only), BAD_USER_INPUT (allowedOrigins). */
  async create(em: Em, auth: Auth, input: CreateDatastoreInput): Promise<Datastore> {
    const member = requireCreate(auth, 'Datastore');
    const resyncSchedule = normalizeResyncSchedule(input.resyncSchedule);
    const datastore = em.create(Datastore, {
      organization: member.organizationId,
      name: input.name,
      description: input.description ?? '',
      visibility: input.visibility,
      embeddingModel: `${this.embedder.provider}/${this.embedder.model}`,
      embeddingDimension: this.embedder.dimension,
      ...chunking(input.chunkSize, input.chunkOverlap),
      allowedOrigins: normalizeAllowedOrigins(input.allowedOrigins),
      resyncSchedule,
    });
    // The schedule before the row: one left without its row removes itself when it fires.
    await this.applySchedule(datastore.id, resyncSchedule);
    await em.flush();
    return datastore;
  }

  /** Throws UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, BAD_USER_INPUT, UPSTREAM_FAILED (embeddingModel: the endpoint failed). */
  async update(em: Em, auth: Auth, id: string, input: UpdateDatastoreInput): Promise<Datastore> {
    const datastore = assertCanChange(auth, await findById(em, Datastore, id), 'Datastore');
    // Checked first (it may ask the endpoint), so a refused model leaves every field as it was.
    const modelChange = input.embeddingModel == null ? null : await this.planModelChange(datastore, input.embeddingModel);
    const resyncSchedule = input.resyncSchedule == null ? null : normalizeResyncSchedule(input.resyncSchedule);
    const allowedOrigins = input.allowedOrigins === undefined ? undefined : normalizeAllowedOrigins(input.allowedOrigins);
    if (allowedOrigins) datastore.allowedOrigins = allowedOrigins;
    if (input.name != null) datastore.name = input.name;
    if (input.description != null) datastore.description = input.description;
    if (input.visibility != null) datastore.visibility = input.visibility;
    Object.assign(datastore, chunking(input.chunkSize ?? datastore.chunkSize, input.chunkOverlap ?? datastore.chunkOverlap));
    const scheduleChanged = resyncSchedule !== null && resyncSchedule !== datastore.resyncSchedule;
    if (resyncSchedule !== null) datastore.resyncSchedule = resyncSchedule;
    // Registered before the row says so, removed after: a failure in between leaves a schedule that removes itself.
    if (scheduleChanged && resyncSchedule !== RESYNC_NONE) await this.applySchedule(datastore.id, resyncSchedule);
    await (modelChange ? this.modelChanges!.apply(em, datastore, modelChange) : em.flush());
    if (scheduleChanged && resyncSchedule === RESYNC_NONE) await this.applySchedule(datastore.id, resyncSchedule);
    await this.changed(em, datastore.id);
    return datastore;
  }

  /** Removes the datastore, its datasources, chunks and files (agents lose the link). Throws UNAUTHENTICATED, FORBIDDEN, NOT_FOUND. */
  async delete(em: Em, auth: Auth, id: string): Promise<Datastore> {
    const datastore = assertCanChange(auth, await findById(em, Datastore, id), 'Datastore');
    const files = await rawQuery<{ storage_key: string }>(em, 'select storage_key from datasources where datastore_id = $1 and storage_key is not null', [datastore.id]);
    const scheduled = await rawQuery<{ id: string }>(em, `select id from datasources where datastore_id = $1 and resync_schedule <> 'none'`, [datastore.id]);
    await em.remove(datastore).flush();
    await this.changed(em, datastore.id);
    await Promise.all(files.map((f) => this.storage.delete(f.storage_key).catch(() => {})));
    // Best effort: a schedule that outlives its row removes itself when it fires.
    if (this.schedules) {
      const targets = [...(datastore.resyncSchedule !== RESYNC_NONE ? [{ datastoreId: datastore.id }] : []), ...scheduled.map((r) => ({ datasourceId: r.id }))];
      await Promise.all(targets.map((t) => this.schedules!.remove(t).catch(() => {})));
    }
    return datastore;
  }

  private planModelChange(datastore: Datastore, requested: string) {
    if (!this.modelChanges) throw badInput('This service cannot change embedding models.', { field: 'embeddingModel' });
    return this.modelChanges.plan(datastore, requested);
  }

  private async applySchedule(id: string, schedule: string): Promise<void> {
    if (!this.schedules) {
      if (schedule !== RESYNC_NONE) throw new Error('Re-sync schedules need the queue (DatastoreService built without ResyncSchedules).');
      return;
    }
    await this.schedules.apply({ datastoreId: id }, schedule);
  }

  private async changed(em: Em, id: string): Promise<void> {
    this.forQueries.delete(id); // at once here; other processes on the notification
    await this.bus.publish(em, DATASTORE_CHANGED, id);
  }

  /** Datastores of the caller's organization with these ids. Throws NOT_FOUND naming the first missing one. */
  async requireOwned(em: Em, organizationId: string, ids: string[]): Promise<Datastore[]> {
    const unique = [...new Set(ids)];
    const found = unique.every(isId)
      ? await em.find(Datastore, { id: { $in: unique }, organization: organizationId })
      : [];
    const missing = unique.find((id) => !found.some((d) => d.id === id));
    if (missing) throw notFoundDatastore(missing);
    return found;
  }
}

function notFoundDatastore(id: string): AppError {
  return new AppError('NOT_FOUND', `Datastore ${id} not found.`, { field: 'datastoreIds', id });
}

/** Chunk settings apply to documents processed afterwards. Throws BAD_USER_INPUT. */
function chunking(chunkSize = DEFAULT_CHUNK_SIZE, chunkOverlap = DEFAULT_CHUNK_OVERLAP): { chunkSize: number; chunkOverlap: number } {
  if (chunkOverlap * 2 > chunkSize) throw badInput('chunkOverlap must be at most half of chunkSize.', { field: 'chunkOverlap' });
  return { chunkSize, chunkOverlap };
}
