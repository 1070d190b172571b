/**
 * Changing a datastore's embedding model. The change is a state on the datastore row
 * (pendingEmbeddingModel / pendingEmbeddingDimension, reembedProgress, reembedError) worked off by
 * the re-embed job (reembed.job.ts): each chunk gets a second vector (`chunks.embedding_next`) by
 * the pending model beside the one queries use, and one transaction swaps them once all are there.
 * Every write of the job is guarded by the pending model, so a change that was replaced or
 * cancelled meanwhile writes nothing.
 */
import { AppError, badInput } from '../errors.ts';
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import type { EventBus } from '../events/bus.ts';
import { EmbedderRegistry, ModelChoiceError, type ModelChoice } from '../providers/embedder-registry.ts';
import { EmbeddingError } from '../providers/embeddings.ts';
import type { Queue } from '../queue/queue.ts';
import type { Datastore } from './datastore.entity.ts';

export const REEMBED_QUEUE = 'datastore-reembed';
/** Channel of DatastoreEmbeddingEvent (JSON): a change started, progressed, completed, failed or was cancelled. */
export const DATASTORE_EMBEDDING = 'datastore_embedding';

export interface ReembedJobData {
  datastoreId: string;
  model: string;
  dimension: number;
}

export interface DatastoreEmbeddingEvent {
  datastoreId: string;
  embeddingModel: string;
  embeddingDimension: number;
  pendingEmbeddingModel: string | null;
  pendingEmbeddingDimension: number | null;
  reembedProgress: number | null;
  reembedError: string | null;
  /** ISO time of the change. */
  at: string;
}

/** What an update asks for: start a change to a model, or cancel the change under way (back to the model in use). */
export type ModelRequest = { kind: 'start'; choice: ModelChoice } | { kind: 'cancel' };

export class ModelChanges {
  constructor(
    readonly registry: EmbedderRegistry,
    private readonly queue: Queue,
    private readonly bus: EventBus,
  ) {}

  /**
   * Checks `requested` (it may ask the endpoint) before anything is written; null when nothing is
   * to be done (the model in use with no change under way, or the change already under way).
   * Throws BAD_USER_INPUT (unknown model, no endpoint), UPSTREAM_FAILED (the endpoint failed).
   */
  async plan(datastore: Datastore, requested: string): Promise<ModelRequest | null> {
    // The recorded models need no check, and cost no call to the endpoint.
    const key = this.registry.keyOf(requested);
    if (key === datastore.embeddingModel) return datastore.pendingEmbeddingModel ? { kind: 'cancel' } : null;
    if (key === datastore.pendingEmbeddingModel) return null;
    let choice: ModelChoice;
    try {
      choice = await this.registry.resolve(requested);
    } catch (err) {
      if (err instanceof ModelChoiceError) throw badInput(err.message, { field: 'embeddingModel' });
      if (err instanceof EmbeddingError) throw new AppError('UPSTREAM_FAILED', err.message, { field: 'embeddingModel' }, err);
      throw err;
    }
    const inUse = choice.key === datastore.embeddingModel && choice.dimension === datastore.embeddingDimension;
    if (inUse) return datastore.pendingEmbeddingModel ? { kind: 'cancel' } : null;
    if (choice.key === datastore.pendingEmbeddingModel && choice.dimension === datastore.pendingEmbeddingDimension) return null;
    return { kind: 'start', choice };
  }

  /**
   * Writes the planned change with the datastore's other changes, in one transaction with its job:
   * vectors left by an earlier change are cleared, so the job re-embeds every chunk.
   */
  async apply(em: Em, datastore: Datastore, request: ModelRequest): Promise<void> {
    await em.transactional(async (tx) => {
      if (request.kind === 'start') {
        datastore.pendingEmbeddingModel = request.choice.key;
        datastore.pendingEmbeddingDimension = request.choice.dimension;
        datastore.reembedProgress = 0;
      } else {
        datastore.pendingEmbeddingModel = null;
        datastore.pendingEmbeddingDimension = null;
        datastore.reembedProgress = null;
      }
      datastore.reembedError = null;
      // The row first: a job's batch write waits on it (for share) and then sees the change.
      await tx.flush();
      await rawQuery(tx, 'update chunks set embedding_next = null where datastore_id = $1 and embedding_next is not null', [datastore.id]);
      if (request.kind === 'start') {
        await this.queue.send(tx, REEMBED_QUEUE, { datastoreId: datastore.id, model: request.choice.key, dimension: request.choice.dimension } satisfies ReembedJobData);
      }
      await this.bus.publish(tx, DATASTORE_EMBEDDING, JSON.stringify(embeddingEvent(datastore)));
    });
  }
}

export function embeddingEvent(d: Pick<Datastore, 'id' | 'embeddingModel' | 'embeddingDimension' | 'pendingEmbeddingModel' | 'pendingEmbeddingDimension' | 'reembedProgress' | 'reembedError'>): DatastoreEmbeddingEvent {
  return {
    datastoreId: d.id,
    embeddingModel: d.embeddingModel,
    embeddingDimension: d.embeddingDimension,
    pendingEmbeddingModel: d.pendingEmbeddingModel,
    pendingEmbeddingDimension: d.pendingEmbeddingDimension,
    reembedProgress: d.reembedProgress,
    reembedError: d.reembedError,
    at: new Date().toISOString(),
  };
}

/** The datastore's columns as an event, in SQL (`d` is the datastores row), so a write and its announcement are one statement. */
export const EMBEDDING_EVENT_SQL = `json_build_object('datastoreId', d.id, 'embeddingModel', d.embedding_model, 'embeddingDimension', d.embedding_dimension,
  'pendingEmbeddingModel', d.pending_embedding_model, 'pendingEmbeddingDimension', d.pending_embedding_dimension,
  'reembedProgress', d.reembed_progress, 'reembedError', d.reembed_error, 'at', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`;
