/**
 * What the rate limits counted while one request was served, so the HTTP layer can tell the
 * client its budget (`RateLimit-*` headers) without every service handing a count up through its
 * return value. Like the log's request id, the meter travels in the async context: the HTTP layer
 * opens one per request (`withRateMeter`), `Limits` records into it, and outside a request (the
 * CLI, background work) there is none and nothing is recorded.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RateState {
  /** Requests the window allows. */
  limit: number;
  /** Requests left in the window after this one (0 when this one was refused). */
  remaining: number;
  /** Seconds until the window ends and the budget is whole again. */
  resetSeconds: number;
}

export class RateMeter {
  private readonly states = new Map<string, RateState>();

  /** `changed` is told the tightest budget each time a count changes it (the HTTP layer writes headers). */
  constructor(private readonly changed: (tightest: RateState | null) => void = () => {}) {}

  record(key: string, state: RateState): void {
    this.states.set(key, state);
    this.changed(this.tightest());
  }

  /** A count that no longer holds (a sign-in that succeeded clears its failures). */
  forget(key: string): void {
    if (this.states.delete(key)) this.changed(this.tightest());
  }

  /**
   * The budget closest to exhaustion among every limit this request was counted against: the
   * fewest requests left, and of those the one that waits longest to reset. That is the one a
   * client must pace itself by.
   */
  tightest(): RateState | null {
    let best: RateState | null = null;
    for (const s of this.states.values()) {
      if (!best || s.remaining < best.remaining || (s.remaining === best.remaining && s.resetSeconds > best.resetSeconds)) best = s;
    }
    return best;
  }
}

const current = new AsyncLocalStorage<RateMeter>();

/** Runs `fn` with `meter` receiving every count made inside it, however deep and however late. */
export function withRateMeter<T>(meter: RateMeter, fn: () => T): T {
  return current.run(meter, fn);
}

/** The meter of the request being served here, if any. */
export function currentRateMeter(): RateMeter | undefined {
  return current.getStore();
}
