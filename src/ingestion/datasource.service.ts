import { createHash } from 'node:crypto';
import type { Auth } from '../auth/auth.ts';
import { isOwner, requireMember } from '../access.ts';
import type { Config } from '../config.ts';
import type { Em } from '../db/orm.ts';
import { Datastore } from '../datastores/datastore.entity.ts';
import { AppError, badInput, notFound } from '../errors.ts';
import { rawQuery } from '../db/raw.ts';
import { notification, type EventBus } from '../events/bus.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { isId, newId } from '../ids.ts';
import type { ObjectStorage } from '../providers/storage.ts';
import type { Queue } from '../queue/queue.ts';
import { Visibility } from '../vocabulary.ts';
import { Datasource, DatasourceStatus, DatasourceType } from './datasource.entity.ts';
import { DATASOURCE_MIME_TYPES, mimeTypeFromFileName, normalizeMimeType } from './loaders/index.ts';

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
  ) {}

  /** Throws NOT_FOUND (unknown, or of another organization). */
  async get(em: Em, auth: Auth, id: string): Promise<Datasource> {
    const member = requireMember(auth);
    const ds = isId(id) ? await em.findOne(Datasource, { id, organization: member.organizationId }) : null;
    if (!ds) throw notFound('Datasource');
    return ds;
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
   * A file sent in the request: stored, then queued. Throws UNAUTHENTICATED, NOT_FOUND,
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
    const datastore = await this.ownDatastore(em, auth, datastoreId);
    const mimeType = this.supportedType(file.mimeType, file.fileName);
    if (file.buffer.length > this.config.uploadMaxBytes) throw tooLarge(this.config.uploadMaxBytes);
    if (file.buffer.length === 0) throw badInput('The file is empty.', { field: 'file' });
    await this.assertWithinLimits(em, datastore.organization.id);
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
   * credentials needed for a public datastore. Throws UNAUTHENTICATED, NOT_FOUND, BAD_USER_INPUT, PAYMENT_REQUIRED.
   */
  async createUploadLink(em: Em, auth: Auth, datastoreId: string, input: { type: string; fileName?: string | null }): Promise<{ datasource: Datasource; link: string; expiresAt: Date; headers: Record<string, string> }> {
    const datastore = await this.writableDatastore(em, auth, datastoreId, { publicAllowed: true });
    const mimeType = this.supportedType(input.type, input.fileName ?? undefined, 'type');
    await this.assertWithinLimits(em, datastore.organization.id);
    const fileName = cleanFileName(input.fileName || `upload${extensionOf(mimeType)}`);
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
   * Throws UNAUTHENTICATED, NOT_FOUND, BAD_USER_INPUT (nothing uploaded), PAYLOAD_TOO_LARGE.
   */
  async processUpload(em: Em, auth: Auth, datastoreId: string, datasourceId: string): Promise<Datasource> {
    const datastore = await this.ownDatastore(em, auth, datastoreId);
    const ds = isId(datasourceId) ? await em.findOne(Datasource, { id: datasourceId, datastore }) : null;
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

  /** A web page or a whole site. Throws UNAUTHENTICATED, NOT_FOUND, BAD_USER_INPUT, PAYMENT_REQUIRED. */
  async createWeb(em: Em, auth: Auth, input: { datastoreId: string; type: DatasourceType; name?: string | null; config: Record<string, unknown>; customId?: string | null }): Promise<Datasource> {
    const datastore = await this.ownDatastore(em, auth, input.datastoreId);
    const config = webConfig(input.type, input.config);
    await this.assertWithinLimits(em, datastore.organization.id);
    return this.createAndQueue(em, {
      datastore,
      type: input.type,
      name: input.name?.trim() || String(config.sitemap ?? config.source_url),
      config,
      customId: cleanCustomId(input.customId),
    });
  }

  /** A raw text document. Throws UNAUTHENTICATED, NOT_FOUND, BAD_USER_INPUT, PAYMENT_REQUIRED. */
  async createText(em: Em, auth: Auth, input: { datastoreId: string; name: string; text: string; metadata?: Record<string, unknown> | null; customId?: string | null }): Promise<Datasource> {
    const datastore = await this.ownDatastore(em, auth, input.datastoreId);
    const text = checkText(input.text);
    await this.assertWithinLimits(em, datastore.organization.id);
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
   * for a public datastore. Throws UNAUTHENTICATED, NOT_FOUND, BAD_USER_INPUT.
   */
  async updateText(em: Em, auth: Auth, datastoreId: string, input: { id: string; text: string; name?: string | null; metadata?: Record<string, unknown> | null }): Promise<Datasource> {
    const datastore = await this.writableDatastore(em, auth, datastoreId, { publicAllowed: true });
    const ds = isId(input.id) ? await em.findOne(Datasource, { id: input.id, datastore }) : null;
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

  /** Processes a datasource again (a site re-crawls). Throws UNAUTHENTICATED, NOT_FOUND. */
  async resync(em: Em, auth: Auth, id: string): Promise<Datasource> {
    const ds = await this.get(em, auth, id);
    return this.requeue(em, ds, DatasourceStatus.pending);
  }

  /** Removes the datasource, its chunks, its file, and the pages of a site. Throws UNAUTHENTICATED, NOT_FOUND. */
  async delete(em: Em, auth: Auth, id: string): Promise<Datasource> {
    const ds = await this.get(em, auth, id);
    const children = ds.type === DatasourceType.web_site ? await em.find(Datasource, { groupId: ds.id }) : [];
    const keys = [ds, ...children].map((d) => d.storageKey).filter((k): k is string => !!k);
    await em.transactional(async (tx) => {
      await tx.nativeDelete(Datasource, { id: { $in: [ds.id, ...children.map((c) => c.id)] } });
    });
    await Promise.all(keys.map((k) => this.storage.delete(k).catch(() => {})));
    return ds;
  }

  /** Announces a status change to every process (the subscription listens). */
  async publishStatus(em: Em, ds: Datasource): Promise<void> {
    const { channel, payload } = this.statusNotification(ds);
    await this.bus.publish(em, channel, payload);
  }

  /**
   * The notification of `ds`'s status as it will be once `changes` are written, for a statement
   * that writes the row and announces it in one round trip (see markRunning, chunk.store.ts).
   */
  statusNotification(ds: Datasource, changes: Partial<Pick<StatusChange, 'status' | 'errorMessage' | 'chunkCount' | 'name'>> = {}): { channel: string; payload: string } {
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

  /**
   * A worker took the datasource: `running` is written and announced by one statement (its own
   * transaction; the notification goes out on its commit). Leaves `ds` as loaded. False when the
   * datasource is gone.
   */
  async markRunning(em: Em, ds: Datasource): Promise<boolean> {
    const { channel, payload } = this.statusNotification(ds, { status: DatasourceStatus.running, errorMessage: null });
    const rows = await rawQuery(
      em,
      `with started as (
         update datasources set status = $2, error_message = null, updated_at = $3 where id = $1 returning id
       )
       select pg_notify($4, $5) from started`,
      [ds.id, DatasourceStatus.running, new Date(), channel, payload],
    );
    return rows.length > 0;
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
      return created;
    });
    await this.publishStatus(em, ds);
    return ds;
  }

  private async requeue(em: Em, ds: Datasource, status: DatasourceStatus): Promise<Datasource> {
    await em.transactional(async (tx) => {
      ds.status = status;
      ds.errorMessage = null;
      tx.persist(ds);
      await tx.flush();
      await this.queue.send(tx, INGEST_QUEUE, { datasourceId: ds.id } satisfies IngestJobData);
    });
    await this.publishStatus(em, ds);
    return ds;
  }

  private async ownDatastore(em: Em, auth: Auth, id: string): Promise<Datastore> {
    const member = requireMember(auth);
    const datastore = isId(id) ? await em.findOne(Datastore, { id, organization: member.organizationId }) : null;
    if (!datastore) throw notFound('Datastore');
    return datastore;
  }

  /** Public datastores accept some writes without credentials, as the REST interface says. */
  private async writableDatastore(em: Em, auth: Auth, id: string, opts: { publicAllowed: boolean }): Promise<Datastore> {
    const datastore = isId(id) ? await em.findOne(Datastore, id) : null;
    if (datastore && opts.publicAllowed && datastore.visibility === Visibility.public) return datastore;
    requireMember(auth);
    if (!datastore || !isOwner(auth, datastore)) throw notFound('Datastore');
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

  /** Throws PAYMENT_REQUIRED while the organization's stored tokens are at or above its limit. */
  async assertWithinLimits(em: Em, organizationId: string): Promise<void> {
    const { used, limit } = await this.tokenAllowance(em, organizationId);
    if (used >= limit) {
      throw new AppError('PAYMENT_REQUIRED', `The organization stores ${used} tokens, its limit is ${limit}: delete datasources or raise the limit.`, {
        used,
        limit,
      });
    }
  }

  /** The organization's stored-token limit and the tokens its datasources store (but one), in one query. */
  async tokenAllowance(em: Em, organizationId: string, exceptDatasourceId?: string): Promise<{ used: number; limit: number }> {
    const rows = await rawQuery<{ limit: string | number; used: string | number }>(
      em,
      `select o.stored_token_limit as "limit",
              (select coalesce(sum(d.token_count), 0) from datasources d where d.organization_id = o.id${exceptDatasourceId ? ' and d.id <> $2' : ''}) as used
       from organizations o where o.id = $1`,
      exceptDatasourceId ? [organizationId, exceptDatasourceId] : [organizationId],
    );
    if (!rows[0]) throw new Error(`Organization ${organizationId} not found`);
    return { used: Number(rows[0].used), limit: Number(rows[0].limit) };
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

function extensionOf(mime: string): string {
  const map: Record<string, string> = {
    'text/csv': '.csv',
    'text/plain': '.txt',
    'text/markdown': '.md',
    'application/pdf': '.pdf',
    'application/json': '.json',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation': '.pptx',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document': '.docx',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': '.xlsx',
  };
  return map[mime] ?? '';
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
