/**
 * Fixed-window counters per key (visitor id, client address). Kept in process memory: with N
 * API processes a visitor gets N times the limit at most, which still stops floods.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Counts one hit; false when the key is over its limit in the current window. */
  hit(key: string, now = Date.now()): boolean {
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      if (this.windows.size > 100_000) this.prune(now);
      w = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    return w.count <= this.limit;
  }

  private prune(now: number): void {
    for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
  }
}
