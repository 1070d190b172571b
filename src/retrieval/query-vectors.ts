import { LRUCache } from 'lru-cache';
import { SharedLoads } from '../cache.ts';
import { abortable, type Embedder } from '../providers/embeddings.ts';

/**
 * The vectors of recent query texts, per model. A datastore query costs an embedding before its
 * SQL; the same question asked again (a suggested question, a widget's starter, a retry, an agent
 * asked the same thing by many visitors) then costs none. The key is the model's identity
 * (provider, name, dimension) and the exact text, so a vector is never served to a datastore of
 * another model. A model's vector for a text does not change, so entries need no expiry: the least
 * recently used ones leave when the cache is full (a 512-dimension vector is kept in 2 KB).
 *
 * Concurrent requests for the same key share one embedding.
 */
export class QueryVectors {
  private readonly cache: LRUCache<string, Float32Array> | null;
  private readonly inFlight = new SharedLoads<string, number[]>();

  /** `maxEntries` 0: no cache (concurrent requests for one text still share an embedding). */
  constructor(maxEntries: number) {
    this.cache = maxEntries > 0 ? new LRUCache<string, Float32Array>({ max: maxEntries }) : null;
  }

  /** The vector of `text` by `embedder`, from the cache when it has it. Throws what embedQuery throws. */
  async embed(embedder: Embedder, text: string, signal?: AbortSignal): Promise<number[]> {
    signal?.throwIfAborted();
    const key = `${embedder.provider}/${embedder.model}#${embedder.dimension}\n${text}`;
    const cached = this.cache?.get(key);
    // Float32 holds what the query sends: the SQL writes the vector as 4-byte floats (vectorLiteral).
    if (cached) return Array.from(cached);
    // Run without the caller's signal: another caller may be waiting for the same vector. The
    // embedder's own deadline bounds it; an aborted caller is released at once below.
    const shared = this.inFlight.run(key, async () => {
      const vector = await embedder.embedQuery(text);
      this.cache?.set(key, Float32Array.from(vector));
      return vector;
    });
    return signal ? abortable(shared, signal) : shared;
  }
}
