/**
 * The re-embed worker: one job per change of a datastore's embedding model (model-change.ts).
 * Resumable and idempotent: a chunk that already has its new vector is not embedded again, so a
 * retried job continues where the last attempt stopped; chunks added meanwhile (ingestion goes on)
 * are picked up by the same loop before the switch.
 */
import type { Job, QueueOptions } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Em, Orm } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { ensureVectorIndex } from '../db/vector-index.ts';
import { vectorLiteral } from '../db/vector.type.ts';
import type { Logger } from '../logger.ts';
import type { EmbedderRegistry } from '../providers/embedder-registry.ts';
import { EmbeddingError, type Embedder } from '../providers/embeddings.ts';
import type { Queue } from '../queue/queue.ts';
import { JobStalled, type Progress } from '../queue/watchdog.ts';
import { DATASTORE_CHANGED } from './datastore.service.ts';
import { DATASTORE_EMBEDDING, EMBEDDING_EVENT_SQL, REEMBED_QUEUE, type ReembedJobData } from './model-change.ts';

export interface ReembedDeps {
  orm: Orm;
  queue: Queue;
  embedders: EmbedderRegistry;
  logger: Logger;
}

/** Chunks per embedding call and write: one progress step. */
const BATCH = 128;

export function reembedQueueOptions(config: Pick<Config, 'jobs'>): QueueOptions {
  return {
    retryLimit: 3,
    retryDelay: config.jobs.retryDelaySeconds,
    retryBackoff: true,
    retryDelayMax: 300,
    heartbeatSeconds: config.jobs.heartbeatSeconds,
    // A large datastore on the local model takes hours (about 14 chunks/s); a dead worker is caught by the heartbeat instead.
    expireInSeconds: 23 * 3600,
  };
}

export async function startReembedWorkers(deps: ReembedDeps): Promise<string> {
  return deps.queue.work<ReembedJobData>(REEMBED_QUEUE, { localConcurrency: 1, pollingIntervalSeconds: 0.5, batchSize: 1 }, (job) => reembed(deps, job));
}

/** The rows of this change: the datastore while its pending model is still the job's. `$1` id, `$2` model, `$3` dimension. */
const STILL_PENDING = 'd.id = $1 and d.pending_embedding_model = $2 and d.pending_embedding_dimension = $3';

export async function reembed(deps: ReembedDeps, job: Job<ReembedJobData> & { retryLimit?: number; progress: Progress }): Promise<void> {
  const { orm, logger } = deps;
  const { datastoreId, model } = job.data;
  const lastAttempt = job.retryCount >= (job.retryLimit ?? 3);
  const { progress } = job;
  try {
    // Guarded: a stalled job is released here even if the stuck work never heeds its abort.
    await progress.guard(reembedAll(deps, job.data, progress));
  } catch (err) {
    // Stopping (not stalled): the job is handed back and resumes.
    if (progress.signal.aborted && !(err instanceof JobStalled)) throw err;
    const permanent = err instanceof EmbeddingError;
    logger.warn('re-embedding failed', { datastoreId, model, attempt: job.retryCount, permanent, error: err });
    if (!permanent && !lastAttempt) throw err;
    await fail(orm.em.fork(), job.data, readable(err));
  }
}

/** Every chunk given its vector by the new model, batch by batch (each a progress step), then the switch. */
async function reembedAll(deps: ReembedDeps, data: ReembedJobData, progress: Progress): Promise<void> {
  const { orm, embedders, logger } = deps;
  const { datastoreId, model, dimension } = data;
  const em = orm.em.fork();
  const embedder = embedders.get(model, dimension);
  if (!embedder) throw new EmbeddingError(`This service cannot embed with ${model}: no embeddings endpoint is configured (OPENAI_BASE_URL).`);
  // The new dimension's HNSW index exists before any chunk moves into it (a new index on an empty predicate is quick).
  progress.step(`preparing the index of ${dimension}-dimension vectors`);
  await ensureVectorIndex(orm, dimension);
  let embedded = 0;
  for (;;) {
    progress.signal.throwIfAborted();
    progress.step(`reading the next chunks to embed with ${model} (${embedded} done)`);
    const batch = await rawQuery<{ id: string; text: string }>(
      em,
      `select c.id, c.text from chunks c where c.datastore_id = $1 and c.embedding_next is null
          and exists (select 1 from datastores d where ${STILL_PENDING}) order by c.id limit ${BATCH}`,
      [datastoreId, model, dimension],
    );
    if (!batch.length) {
      progress.step(`switching the datastore to ${model}`);
      const outcome = await trySwitch(em, data);
      if (outcome === 'more') continue; // chunks were added since the last batch
      if (outcome === 'switched') logger.info('embedding model changed', { datastoreId, model, dimension });
      return;
    }
    progress.step(`embedding chunks ${embedded + 1}-${embedded + batch.length} with ${model}`);
    if (!(await writeBatch(em, data, batch, embedder, progress.signal))) return; // replaced or cancelled
    embedded += batch.length;
  }
}

/** Embeds a batch and stores the vectors with the progress; false when the change is no longer pending. */
async function writeBatch(em: Em, data: ReembedJobData, batch: { id: string; text: string }[], embedder: Embedder, signal?: AbortSignal): Promise<boolean> {
  const vectors = await embedder.embedDocuments(batch.map((r) => r.text), signal);
  // The lock waits for a transaction that replaces or cancels the change, and then sees it: no stale vector is written after it.
  const [row] = await rawQuery<{ written: number }>(
    em,
    `with d as (select id from datastores d where ${STILL_PENDING} for share),
          written as (
            update chunks c set embedding_next = t.v::vector
              from unnest($4::uuid[], $5::text[]) as t(id, v)
             where c.id = t.id and c.datastore_id = (select id from d)
            returning c.id)
     select (select count(*) from written)::int as written from d`,
    [data.datastoreId, data.model, data.dimension, batch.map((r) => r.id), vectors.map(vectorLiteral)],
  );
  if (!row) return false;
  // Progress and its announcement in one statement; the share counts chunks added meanwhile.
  const [progressed] = await rawQuery(
    em,
    `with counts as (select count(*) filter (where embedding_next is not null)::float8 as done, count(*)::float8 as total from chunks where datastore_id = $1),
          d as (update datastores d set reembed_progress = least(1, (select done / greatest(total, 1) from counts)) where ${STILL_PENDING} returning d.*)
     select pg_notify('${DATASTORE_EMBEDDING}', ${EMBEDDING_EVENT_SQL}) from d`,
    [data.datastoreId, data.model, data.dimension],
  );
  return progressed !== undefined;
}

/**
 * The switch, in one transaction: with the datastore row locked (ingestion of this datastore
 * waits for it, then sees the new model), every chunk's new vector replaces the old one and the
 * datastore records the new model. 'more' when chunks without a new vector appeared meanwhile.
 */
async function trySwitch(em: Em, data: ReembedJobData): Promise<'switched' | 'more' | 'gone'> {
  return em.transactional(async (tx) => {
    const [locked] = await rawQuery(tx, `select id from datastores d where ${STILL_PENDING} for update`, [data.datastoreId, data.model, data.dimension]);
    if (!locked) return 'gone';
    const [missing] = await rawQuery(tx, 'select 1 from chunks where datastore_id = $1 and embedding_next is null limit 1', [data.datastoreId]);
    if (missing) return 'more';
    await rawQuery(tx, 'update chunks set embedding = embedding_next, dimension = $2, embedding_next = null where datastore_id = $1', [data.datastoreId, data.dimension]);
    await rawQuery(
      tx,
      `with d as (
         update datastores d set embedding_model = $2, embedding_dimension = $3, pending_embedding_model = null, pending_embedding_dimension = null,
                reembed_progress = 1, reembed_error = null, updated_at = now()
          where ${STILL_PENDING} returning d.*)
       select pg_notify('${DATASTORE_EMBEDDING}', ${EMBEDDING_EVENT_SQL}), pg_notify('${DATASTORE_CHANGED}', d.id::text) from d`,
      [data.datastoreId, data.model, data.dimension],
    );
    return 'switched';
  });
}

/** The old vectors stay in use; the pending state is cleared and the reason kept on the datastore. */
async function fail(em: Em, data: ReembedJobData, message: string): Promise<void> {
  await em.transactional(async (tx) => {
    const [row] = await rawQuery(
      tx,
      `with d as (
         update datastores d set pending_embedding_model = null, pending_embedding_dimension = null, reembed_progress = null, reembed_error = $4, updated_at = now()
          where ${STILL_PENDING} returning d.*)
       select pg_notify('${DATASTORE_EMBEDDING}', ${EMBEDDING_EVENT_SQL}) from d`,
      [data.datastoreId, data.model, data.dimension, message],
    );
    if (row) await rawQuery(tx, 'update chunks set embedding_next = null where datastore_id = $1 and embedding_next is not null', [data.datastoreId]);
  });
}

function readable(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (err instanceof EmbeddingError || err instanceof JobStalled ? message : `Re-embedding failed: ${message}`).slice(0, 1000);
}
