/**
 * The ingestion worker: one datasource per job. Idempotent: running it twice leaves the same
 * rows, because a datasource's chunks are replaced in one transaction at the end.
 */
import type { Job, QueueOptions } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Em, Orm } from '../db/orm.ts';
import { Datastore } from '../datastores/datastore.entity.ts';
import { crawlPageLimit, tokensFit } from '../limits/content.ts';
import type { Logger } from '../logger.ts';
import type { Embedder } from '../providers/embeddings.ts';
import type { EmbedderRegistry } from '../providers/embedder-registry.ts';
import { FetchError, safeFetch } from '../providers/safe-fetch.ts';
import type { ObjectStorage } from '../providers/storage.ts';
import type { Queue } from '../queue/queue.ts';
import { JobStalled, type Progress } from '../queue/watchdog.ts';
import { storeChunks } from './chunk.store.ts';
import { estimateTokens, splitDocument } from './chunker.ts';
import { Datasource, DatasourceStatus, DatasourceType } from './datasource.entity.ts';
import { contentHash, INGEST_QUEUE, type DatasourceService, type IngestJobData, type Run } from './datasource.service.ts';
import { loadDocument, LoaderError, normalizeMimeType, type LoadedDocument } from './loaders/index.ts';
import { decodeHtml, discoverSite, extractMainContent, RobotsDisallowedError } from './web.ts';
import { chunkedWith, conditionalHeaders, keepsChunks, recordSource, type Validators } from './unchanged.ts';

/** A failure that another attempt cannot fix: the datasource ends in `error` at once. */
export class PermanentError extends Error {}

export interface IngestDeps {
  config: Config;
  orm: Orm;
  storage: ObjectStorage;
  queue: Queue;
  embedder: Embedder;
  /** Each datastore's own model (its embedding model can change); without it, the configured embedder. */
  embedders?: EmbedderRegistry;
  datasources: DatasourceService;
  logger: Logger;
}

export const INGEST_QUEUE_OPTIONS = {
  retryLimit: 3,
  retryDelay: 5,
  retryBackoff: true,
  retryDelayMax: 300,
  expireInSeconds: 15 * 60,
};

/**
 * The ingest queue as configured: a worker that dies mid-job stops its heartbeat, and its job is
 * retried within about JOB_HEARTBEAT_SECONDS + QUEUE_SUPERVISE_SECONDS + JOB_RETRY_DELAY_SECONDS
 * instead of waiting for expireInSeconds.
 */
export function ingestQueueOptions(config: Pick<Config, 'jobs'>): QueueOptions {
  return { ...INGEST_QUEUE_OPTIONS, retryDelay: config.jobs.retryDelaySeconds, heartbeatSeconds: config.jobs.heartbeatSeconds, retryLimit: config.jobs.retryLimit ?? INGEST_QUEUE_OPTIONS.retryLimit };
}

export async function startIngestWorkers(deps: IngestDeps, opts: { concurrency?: number; pollingIntervalSeconds?: number } = {}) {
  return deps.queue.work<IngestJobData>(
    INGEST_QUEUE,
    // Batches of 4 with burst: while the queue is full a worker fetches again at once instead of waiting out the poll.
    { localConcurrency: opts.concurrency ?? 2, pollingIntervalSeconds: opts.pollingIntervalSeconds ?? 0.5, batchSize: 4, burstWhenBatchFull: true },
    (job) => ingest(deps, job),
  );
}

export async function ingest(deps: IngestDeps, job: Job<IngestJobData> & { retryLimit?: number; progress: Progress }): Promise<void> {
  const { orm, datasources, logger } = deps;
  const em = orm.em.fork();
  // The datasource with its datastore (chunking, embedding model) in one query.
  const ds = await em.findOne(Datasource, job.data.datasourceId, { populate: ['content', 'datastore'] });
  if (!ds) return; // deleted meanwhile: nothing to do
  const datastore = ds.datastore;
  const lastAttempt = job.retryCount >= (job.retryLimit ?? INGEST_QUEUE_OPTIONS.retryLimit);
  const { progress } = job;

  // `running`, written and announced in one statement.
  const run = await datasources.markRunning(em, ds);
  if (!run) return;

  try {
    // Guarded: a stalled job is released here even if the stuck work never heeds its abort.
    await progress.guard(ds.type === DatasourceType.web_site ? crawlSite(deps, ds, run, progress) : processDocument(deps, ds, run, datastore, progress));
  } catch (err) {
    const permanent = isPermanent(err);
    logger.warn('ingestion failed', { datasourceId: ds.id, attempt: job.retryCount, permanent, error: err });
    if (!permanent && !lastAttempt) {
      // The stuck run may still finish some day: its outcome must not land over the next attempt's, and a person sees why it is retried.
      if (err instanceof JobStalled) await datasources.markAbandoned(em.fork(), ds, run, err.message);
      throw err; // pg-boss retries with backoff
    }
    await datasources.markFailed(em.fork(), ds, run, readable(err));
  }
}

async function processDocument(deps: IngestDeps, ds: Datasource, run: Run, datastore: Datastore, progress: Progress): Promise<void> {
  const { orm, datasources } = deps;
  const { signal } = progress;
  const embedder = deps.embedders ? deps.embedders.get(datastore.embeddingModel, datastore.embeddingDimension) : deps.embedder;
  const current = chunkedWith(datastore);
  const loaded = await loadContent(deps, ds, progress, conditionalHeaders(ds, current));
  // Unchanged content (a 304, or the same extracted text) keeps its chunks: nothing embedded.
  if ('notModified' in loaded || keepsChunks(ds, contentHash(loaded.hashInput), current)) {
    await datasources.markUnchanged(orm.em.fork(), ds, run, loaded.validators);
    return;
  }
  const { doc, hashInput, url } = loaded;
  progress.step('splitting the text into chunks');
  const pieces = await splitDocument(doc, { chunkSize: datastore.chunkSize, chunkOverlap: datastore.chunkOverlap });
  if (!pieces.length) throw new PermanentError('The document has no text to index.');
  const tokens = pieces.reduce((n, p) => n + estimateTokens(p.text), 0);

  const em = orm.em.fork();
  progress.step("checking the organization's token limit");
  const { fits, used: others, limit } = await tokensFit(em, ds.organization.id, ds.id, tokens);
  if (!fits) {
    await datasources.markOverLimit(em, ds, run, `Storing ${tokens} more tokens would pass the organization's limit of ${limit} (${others} stored).`);
    return;
  }

  if (!embedder) {
    throw new PermanentError(`This datastore's vectors are made by ${datastore.embeddingModel}, which this service cannot use: no embeddings endpoint is configured.`);
  }
  if (datastore.embeddingDimension !== embedder.dimension) {
    throw new PermanentError(
      `This datastore was created for ${datastore.embeddingModel} (${datastore.embeddingDimension} dimensions); the configured embedding model gives ${embedder.dimension}.`,
    );
  }
  const vectors = await embedInBatches(embedder, pieces.map((p) => p.text), deps.config.embedding.batchSize, progress);
  const base = { datasource_name: doc.title && ds.type === DatasourceType.web_page ? doc.title : ds.name, source: url ?? ds.fileName ?? ds.name, custom_id: ds.customId ?? null };
  // A web page named after its URL (the default) takes its title.
  const name = ds.type === DatasourceType.web_page && doc.title && (!ds.name || ds.name === ds.config.source_url) ? doc.title.slice(0, 500) : null;

  // Chunks replaced, the row synched and announced, the fetch's validators kept: atomically (deleted or taken over meanwhile: nothing written).
  progress.step(`storing ${pieces.length} chunks`);
  const stored = await em.transactional(async (tx) => {
    const written = await storeChunks(
      tx,
      { datasourceId: ds.id, datastoreId: datastore.id, customId: ds.customId ?? null, dimension: embedder.dimension, embeddingModel: datastore.embeddingModel },
      pieces.map((p, i) => ({ ...p, embedding: vectors[i]!, metadata: { ...base, ...(p.page != null ? { page: p.page } : {}), ...(p.section ? { section: p.section } : {}) } })),
      {
        tokenCount: tokens,
        hash: contentHash(hashInput),
        name,
        status: datasources.statusWrite(ds, run, DatasourceStatus.synched, { chunkCount: pieces.length, ...(name ? { name } : {}) }),
      },
    );
    if (written) await recordSource(tx, ds.id, loaded.validators, current);
    return written;
  });
  if (!stored) await assertSameModel(em, datastore);
}

/**
 * The texts' vectors, in order, each batch a progress step. The batches go out at once, as the
 * endpoint's client would send them; the stage names the first batch still awaited.
 */
async function embedInBatches(embedder: Embedder, texts: string[], batchSize: number, progress: Progress): Promise<number[][]> {
  const size = Math.max(1, batchSize);
  const starts = Array.from({ length: Math.ceil(texts.length / size) }, (_, i) => i * size);
  const done = new Set<number>();
  const awaited = () => {
    const start = starts.find((s) => !done.has(s))!;
    progress.step(`embedding chunks ${start + 1}-${Math.min(start + size, texts.length)} of ${texts.length}`);
  };
  awaited();
  const batches = await Promise.all(
    starts.map(async (start) => {
      const vectors = await embedder.embedDocuments(texts.slice(start, start + size), progress.signal);
      done.add(start);
      if (done.size < starts.length) awaited();
      return vectors;
    }),
  );
  return batches.flat();
}

/** Vectors by a model the datastore switched away from meanwhile were not stored: another attempt embeds with the new one. */
async function assertSameModel(em: Em, datastore: Datastore): Promise<void> {
  const now = await em.fork().findOne(Datastore, datastore.id);
  if (now && now.embeddingModel !== datastore.embeddingModel) {
    throw new Error(`The datastore's embedding model changed to ${now.embeddingModel} while this document was processed.`);
  }
}

type Loaded = { doc: LoadedDocument; hashInput: Buffer | string; url?: string; validators: Validators } | { notModified: true; validators: Validators };
const NO_VALIDATORS: Validators = { etag: null, lastModified: null };

async function loadContent(deps: IngestDeps, ds: Datasource, progress: Progress, conditional: Record<string, string>): Promise<Loaded> {
  const { signal } = progress;
  switch (ds.type) {
    case DatasourceType.text: {
      const text = ds.content ?? '';
      return { doc: { text, metadata: {} }, hashInput: text, validators: NO_VALIDATORS };
    }
    case DatasourceType.file: {
      if (!ds.storageKey || !ds.mimeType) throw new PermanentError('The datasource has no file.');
      const file = ds.fileName ?? ds.name;
      progress.step(`reading the file ${file}`);
      const data = await deps.storage.get(ds.storageKey);
      progress.step(`extracting the text of ${file}`);
      return { doc: await loadDocument(data, ds.mimeType), hashInput: data, validators: NO_VALIDATORS };
    }
    case DatasourceType.web_page: {
      // robots.txt is not asked here. A page of a site crawl was listed only if robots.txt allowed
      // it (web.ts, discoverSite); a web_page of its own is one page a user asked for by its URL,
      // fetched once on their behalf, like a browser would, not a crawl that robots.txt governs.
      const url = String(ds.config.source_url);
      progress.step(`fetching ${url}`);
      const res = await safeFetch(url, { allowPrivate: deps.config.allowPrivateUrls, signal, accept: 'text/html,application/xhtml+xml,text/plain;q=0.8,*/*;q=0.5', headers: conditional });
      // A 304 may leave a validator out: the stored one still names the content.
      const validators = { etag: res.etag ?? (res.status === 304 ? (ds.etag ?? null) : null), lastModified: res.lastModified ?? (res.status === 304 ? (ds.lastModified ?? null) : null) };
      if (res.status === 304) return { notModified: true, validators };
      progress.step(`extracting the text of ${res.url}`);
      const type = normalizeMimeType(res.contentType ?? 'text/html');
      if (type === 'text/html' || type === 'application/xhtml+xml') {
        const page = extractMainContent(decodeHtml(res.body, res.contentType), res.url);
        return { doc: { text: page.text, title: page.title, metadata: {} }, hashInput: page.text, url: res.url, validators };
      }
      return { doc: await loadDocument(res.body, type), hashInput: res.body, url: res.url, validators };
    }
    default:
      throw new PermanentError(`Cannot process a ${ds.type} datasource as a document.`);
  }
}

/** A site: discover its pages, make each a web_page child, drop pages that disappeared. */
async function crawlSite(deps: IngestDeps, site: Datasource, run: Run, progress: Progress): Promise<void> {
  const { orm, config, datasources } = deps;
  const { signal } = progress;
  const em = orm.em.fork();
  const fetcher = (url: string) => {
    progress.step(`fetching ${url}`);
    return safeFetch(url, { allowPrivate: config.allowPrivateUrls, signal });
  };
  const { urls, crawlDelayMs } = await discoverSite({
    sourceUrl: typeof site.config.source_url === 'string' ? site.config.source_url : undefined,
    sitemap: typeof site.config.sitemap === 'string' ? site.config.sitemap : undefined,
    limit: await crawlPageLimit(em, site.organization.id),
    fetch: fetcher,
    signal,
  });
  if (!urls.length) throw new PermanentError('No pages were found on this site.');
  progress.step(`recording the site's ${urls.length} pages`);
  await datasources.replaceSitePages(em, site, run, urls, pageStarts(urls, crawlDelayMs));
}

/**
 * When each page's job may start, in seconds from now: the pages of an origin whose robots.txt
 * asks for a Crawl-delay are spaced by it, so their fetches (one per job) keep that pace.
 */
function pageStarts(urls: string[], crawlDelayMs: Map<string, number>): number[] {
  const next = new Map<string, number>();
  return urls.map((url) => {
    const origin = new URL(url).origin;
    const at = next.get(origin) ?? 0;
    next.set(origin, at + (crawlDelayMs.get(origin) ?? 0) / 1000);
    return Math.ceil(at);
  });
}

/** Timeouts, network failures and 5xx/429 answers may pass; everything else about the input will not. */
function isPermanent(err: unknown): boolean {
  if (err instanceof FetchError) {
    if (err.code === 'TIMEOUT' || err.code === 'NETWORK') return false;
    if (err.code === 'HTTP_STATUS' && (err.status === 429 || (err.status ?? 0) >= 500)) return false;
    return true;
  }
  return err instanceof PermanentError || err instanceof LoaderError || err instanceof RobotsDisallowedError;
}

function readable(err: unknown): string {
  if (err instanceof LoaderError || err instanceof FetchError || err instanceof PermanentError || err instanceof RobotsDisallowedError || err instanceof JobStalled) return err.message;
  return `Processing failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 1000);
}
