/**
 * A client's rate budget in the response, under the field names of the IETF draft
 * (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Limit`, `RateLimit-Remaining`,
 * `RateLimit-Reset` (seconds until the window resets), and `Retry-After` (seconds) on a refusal.
 *
 * The limits record what they count on the request's meter (src/limits/meter.ts); the meter opened
 * here writes the tightest budget onto the response as soon as it changes, so every transport that
 * answers through this response (REST JSON and SSE, Apollo at /graphql, graphql-sse when the
 * subscription starts before its head is sent) carries it without knowing the limits.
 */
import type { ServerResponse } from 'node:http';
import { RateMeter, withRateMeter } from '../limits/meter.ts';

/** Every header this file writes: browsers must be allowed to read them (CORS expose list). */
export const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'] as const;

/**
 * A refusal that names no wait of its own (a busy worker pool) asks for this one: long enough not
 * to be retried in a tight loop, short against the jobs that fill the pool.
 */
const BUSY_RETRY_SECONDS = 5;

/** Runs one request's handling with a meter whose counts become headers of `res` while its head is unsent. */
export function withRateHeaders<T>(res: ServerResponse, fn: () => T): T {
  const meter = new RateMeter((tightest) => {
    if (res.headersSent) return;
    if (!tightest) {
      // The only count was cleared (a sign-in that succeeded): nothing of it is left to report.
      for (const name of RATE_LIMIT_HEADERS) res.removeHeader(name);
      return;
    }
    res.setHeader('RateLimit-Limit', String(tightest.limit));
    res.setHeader('RateLimit-Remaining', String(tightest.remaining));
    res.setHeader('RateLimit-Reset', String(tightest.resetSeconds));
  });
  return withRateMeter(meter, fn);
}

/** The `Retry-After` of an error, in seconds: null unless it is RATE_LIMITED. */
export function retryAfterOf(error: { code?: unknown; details?: unknown }): number | null {
  if (error.code !== 'RATE_LIMITED') return null;
  const given = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return typeof given === 'number' && Number.isFinite(given) && given >= 1 ? Math.ceil(given) : BUSY_RETRY_SECONDS;
}

/** The longest wait any RATE_LIMITED error of a GraphQL response asks for; null when none does. */
export function retryAfterOfErrors(errors: readonly { extensions?: Record<string, unknown> }[] | undefined): number | null {
  const waits = (errors ?? []).map((e) => retryAfterOf(e.extensions ?? {})).filter((s): s is number => s !== null);
  return waits.length ? Math.max(...waits) : null;
}
