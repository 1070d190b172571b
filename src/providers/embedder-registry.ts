import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { createEmbedder, createEndpointEmbedder, EmbeddingError, LOCAL_EMBEDDING_DIMENSION, type Embedder } from './embeddings.ts';
import { createEmbeddingsEndpoint, EndpointCallError } from './embeddings-endpoint.ts';

/** The shipped model, as datastores record it (`provider/model`). */
export const LOCAL_MODEL_KEY = 'local/universal-sentence-encoder';
const LOCAL_BATCH_SIZE = 64;
const ENDPOINT_BATCH_SIZE = 256;
/** Checking a model name is part of a user's request: it must answer or fail within this. */
const PROBE_TIMEOUT_MS = 30_000;

/** A model a datastore can change to: its recorded key and the dimension of its vectors. */
export interface ModelChoice {
  key: string;
  dimension: number;
}

/** The requested model cannot be used: the user's input is wrong, not the endpoint. */
export class ModelChoiceError extends Error {}

/**
 * Embedders per datastore: each datastore's vectors were made by the model it records, so its
 * queries and documents must be embedded by that same model. Embedders are made on first use and
 * kept; the local model's weights load only when a local embedder first embeds something.
 */
export class EmbedderRegistry {
  private readonly made = new Map<string, Embedder>();

  constructor(
    private readonly config: Pick<Config, 'openai' | 'embedding'>,
    /** The configured model (new datastores get it); reused for its own key so there is one instance. */
    readonly configured: Embedder,
    private readonly logger?: Logger,
    /** Applied to every embedder made here (metrics count their calls as the configured one's). */
    private readonly wrap: (embedder: Embedder) => Embedder = (embedder) => embedder,
  ) {}

  /** The key a datastore records for the configured model. */
  get configuredKey(): string {
    return `${this.configured.provider}/${this.configured.model}`;
  }

  /** The embedder of vectors recorded as `key` with `dimension`, or null when this process cannot make it (no endpoint configured). */
  get(key: string, dimension: number): Embedder | null {
    if (key === this.configuredKey && dimension === this.configured.dimension) return this.configured;
    const id = `${key}#${dimension}`;
    let embedder = this.made.get(id);
    if (embedder) return embedder;
    if (key === LOCAL_MODEL_KEY) {
      if (dimension !== LOCAL_EMBEDDING_DIMENSION) return null;
      embedder = createEmbedder({ openai: null, embedding: { provider: 'local', model: key.slice('local/'.length), dimension, batchSize: LOCAL_BATCH_SIZE } });
    } else if (key.startsWith('openai/') && this.config.openai) {
      const batchSize = this.config.embedding.provider === 'openai' ? this.config.embedding.batchSize : ENDPOINT_BATCH_SIZE;
      embedder = createEndpointEmbedder(this.config.openai, { provider: 'openai', model: key.slice('openai/'.length), dimension, batchSize }, this.logger);
    } else {
      return null;
    }
    embedder = this.wrap(embedder);
    this.made.set(id, embedder);
    return embedder;
  }

  /** The key `requested` would be recorded as, without asking the endpoint (no check that the model exists). */
  keyOf(requested: string): string {
    const name = requested.trim();
    if (name === 'local') return LOCAL_MODEL_KEY;
    return name.startsWith('local/') || name.startsWith('openai/') ? name : `openai/${name}`;
  }

  /**
   * What `requested` names: `local` (or its full key) is the shipped model; anything else is a
   * model of the configured endpoint (`openai/` prefix optional), which must be in the endpoint's
   * model list (when it publishes one) and answer an embedding, whose length is the dimension.
   * Throws ModelChoiceError (no endpoint, unknown model), EmbeddingError (the endpoint failed).
   */
  async resolve(requested: string): Promise<ModelChoice> {
    const name = requested.trim();
    if (name === 'local' || name === LOCAL_MODEL_KEY) return { key: LOCAL_MODEL_KEY, dimension: LOCAL_EMBEDDING_DIMENSION };
    if (name === 'local/' || name.startsWith('local/')) throw new ModelChoiceError(`The only local model is "local" (${LOCAL_MODEL_KEY}).`);
    const model = name.startsWith('openai/') ? name.slice('openai/'.length) : name;
    if (!model || model.length > 200) throw new ModelChoiceError('embeddingModel must be "local" or a model name of the embeddings endpoint (1 to 200 characters).');
    const endpoint = this.config.openai;
    if (!endpoint) throw new ModelChoiceError(`No embeddings endpoint is configured (OPENAI_BASE_URL), so the only model is "local"; got "${model}".`);
    const key = `openai/${model}`;
    if (key === this.configuredKey) return { key, dimension: this.configured.dimension };
    const listed = await listModels(endpoint);
    if (listed && !listed.includes(model)) throw new ModelChoiceError(`The embeddings endpoint has no model "${model}".`);
    return { key, dimension: await probeDimension(endpoint, model) };
  }
}

/** The endpoint's model ids, or null when it does not publish a list (not every compatible server does). */
async function listModels(endpoint: NonNullable<Config['openai']>): Promise<string[] | null> {
  let res: Response;
  try {
    res = await fetch(`${endpoint.baseUrl}/models`, { headers: { authorization: `Bearer ${endpoint.apiKey}` }, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
  } catch (err) {
    throw new EmbeddingError(`The embeddings endpoint at ${endpoint.baseUrl} could not be reached: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (!res.ok) {
    await res.body?.cancel();
    if (res.status === 401 || res.status === 403 || res.status >= 500) throw new EmbeddingError(`The embeddings endpoint answered ${res.status} to the model list`, { status: res.status });
    return null;
  }
  const body = (await res.json().catch(() => null)) as { data?: Array<{ id?: unknown }> } | null;
  if (!Array.isArray(body?.data)) return null;
  return body.data.map((m) => String(m.id));
}

/** One embedding, without asking for a size: its length is the model's dimension. */
async function probeDimension(endpoint: NonNullable<Config['openai']>, model: string): Promise<number> {
  const call = createEmbeddingsEndpoint({ baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey, timeoutMs: PROBE_TIMEOUT_MS, maxRetries: 0, keepAlive: false });
  let vector: ArrayLike<number> | undefined;
  try {
    [vector] = await call({ model, input: ['dimension probe'] }, 1);
  } catch (err) {
    const status = err instanceof EndpointCallError ? err.status : undefined;
    // The endpoint refusing the model by name is the user's input; anything else is the endpoint's failure.
    if (status === 400 || status === 404) throw new ModelChoiceError(`The embeddings endpoint refused the model "${model}" (${status}).`);
    throw new EmbeddingError(`The embeddings endpoint at ${endpoint.baseUrl} failed to embed with "${model}": ${err instanceof Error ? err.message : String(err)}`, { status, cause: err });
  }
  if (!vector || vector.length < 1 || vector.length > 16_000) throw new ModelChoiceError(`The model "${model}" did not return a usable vector.`);
  return vector.length;
}
