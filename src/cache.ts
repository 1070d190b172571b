import { LRUCache } from 'lru-cache';

/**
 * A bounded map whose entries expire: the safety net under event-driven invalidation. When
 * full it drops the least recently used entry, so a hot agent or key stays cached while a
 * burst of one-off lookups passes through.
 */
export class TtlCache<K extends {}, V> {
  // lru-cache refuses null and undefined values; a box lets callers cache "known absent" (null).
  private readonly entries: LRUCache<K, { value: V }>;

  /** `clock`: milliseconds now; tests pass their own to step over a TTL without waiting. */
  constructor(
    private readonly ttlMs: number,
    maxEntries = 10_000,
    clock?: () => number,
  ) {
    this.entries = new LRUCache<K, { value: V }>({
      max: maxEntries,
      ttl: ttlMs,
      ...(clock ? { perf: { now: clock }, ttlResolution: 0 } : {}),
    });
  }

  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** `ttlMs` may shorten an entry's life (e.g. a session that ends sooner), never lengthen it. */
  set(key: K, value: V, ttlMs = this.ttlMs): void {
    const ttl = Math.min(ttlMs, this.ttlMs);
    // lru-cache reads a ttl of 0 as "never expires": an entry already due is simply not kept.
    if (ttl <= 0) this.entries.delete(key);
    else this.entries.set(key, { value }, { ttl });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (e.g. all cache keys of one agent). */
  deleteWhere(match: (value: V, key: K) => boolean): void {
    const doomed: K[] = [];
    for (const [key, entry] of this.entries.entries()) if (match(entry.value, key)) doomed.push(key);
    for (const key of doomed) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

/**
 * One load per key at a time: callers that miss together share it, so a burst of requests that
 * finds an entry just expired costs one read, not one per request, each waiting for the pool.
 */
export class SharedLoads<K, V> {
  private readonly loads = new Map<K, Promise<V>>();

  run(key: K, load: () => Promise<V>): Promise<V> {
    let loading = this.loads.get(key);
    if (!loading) {
      loading = load().finally(() => this.loads.delete(key));
      this.loads.set(key, loading);
    }
    return loading;
  }
}
