/**
 * Every limit of the service, behind one object built once per process (`services.limits`) and
 * called the same way by every entry point (answers, forms, the universal processor, sign-in):
 *
 * - monthly queries: `limits.queries.reserve / refund` (PAYMENT_REQUIRED), one query reserved ahead;
 * - stored tokens and crawl pages: content.ts, functions of the database the ingestion calls directly;
 * - request rates of outside visitors: `limits.admitVisitor` (RATE_LIMITED);
 * - the sign-in throttle: `limits.admitSignIn / signedIn` (RATE_LIMITED).
 *
 * Rates and the throttle are counted in PostgreSQL (rates.ts), so they hold across processes and
 * restarts. The keys of `rate_counters`:
 *   `ip:<address>`              every anonymous request from one address, whatever it asks (an
 *                               agent, a form, the universal processor, a public datastore's
 *                               query): RATE_LIMIT_IP_PER_MINUTE. A datastore query counts here
 *                               alone: it has no visitor id, and a key of its own for the address
 *                               would only lower the address's budget;
 *   `visitor:<scope>|<visitor>` one visitor id of one agent or form (the universal processor,
 *                               which has no visitor id, uses the address): RATE_LIMIT_VISITOR_PER_MINUTE;
 *   `sign-in:<address>|<email>` sign-in attempts, cleared by a success: 10 per 15 minutes;
 *   `sign-in:<address>`         every sign-in attempt of an address, whatever the email (one
 *                               address trying many accounts): RATE_LIMIT_SIGNIN_PER_MINUTE;
 *   `sign-up:<address>`         sign-ups of an address: RATE_LIMIT_SIGNUP_PER_HOUR.
 * Every refusal carries `details.retryAfterSeconds`: when the window that refused ends. Every
 * count is also recorded on the request's meter (meter.ts), which the HTTP layer reports as
 * `RateLimit-*` headers.
 */
import type { Config } from '../config.ts';
import type { Em } from '../db/orm.ts';
import { AppError } from '../errors.ts';
import { currentRateMeter } from './meter.ts';
import { GroupedRateHits } from './grouped.ts';
import { QueryAllowance } from './queries.ts';
import { forget, prune, type Count, type Hit } from './rates.ts';

const MINUTE = 60;
const SIGN_IN_FAILURES = 10;
const SIGN_IN_WINDOW_SECONDS = 15 * 60;
/** Ended windows are deleted at most this often per process. */
const PRUNE_EVERY_MS = 60_000;

export interface Visitor {
  /** The agent or form asked: a visitor id counts per scope. Null: the address's budget alone (a datastore query). */
  scope: string | null;
  /** The visitor's id; null when the caller has none (the address stands for it). */
  visitorId: string | null;
  ip: string;
  /** What is counted, said in the refusal ("questions", "messages", "files"). */
  what: string;
}

export class Limits {
  /** The monthly query allowance (one query reserved ahead per organization). */
  readonly queries = new QueryAllowance();
  /** Requests arriving together are counted in one statement (grouped.ts). */
  private readonly hits = new GroupedRateHits();
  private lastPrune = 0;
  private pruning: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly rates: Config['rateLimits'],
    private readonly accounts: Config['authRates'] = { signUpsPerHour: 20, signInsPerMinute: 30 },
  ) {}

  /**
   * Counts one request of an outside visitor against its address's budget (shared by every
   * feature) and its own (per agent or form; a datastore query has none). Throws RATE_LIMITED
   * when either is spent.
   */
  async admitVisitor(em: Em, visitor: Visitor): Promise<void> {
    const hits: Hit[] = [{ key: `ip:${visitor.ip}`, windowSeconds: MINUTE, limit: this.rates.perIpPerMinute }];
    if (visitor.scope !== null) {
      hits.push({ key: `visitor:${visitor.scope}|${visitor.visitorId ?? visitor.ip}`, windowSeconds: MINUTE, limit: this.rates.perVisitorPerMinute });
    }
    const counts = await this.count(em, hits);
    const over = counts.filter((c) => c.hits > c.limit);
    if (over.length) {
      const retryAfterSeconds = Math.max(...over.map((c) => c.retryAfterSeconds));
      throw new AppError('RATE_LIMITED', `Too many ${visitor.what}; wait a minute and try again.`, { retryAfterSeconds });
    }
  }

  /**
   * Counts a sign-in attempt of this address for this email; `signedIn` clears the count, so
   * what remains are failures. Counting before the password is checked means guesses sent
   * at once cannot all pass. Throws RATE_LIMITED after 10 failures in 15 minutes.
   */
  async admitSignIn(em: Em, ip: string, email: string): Promise<void> {
    const counts = await this.count(em, [
      { key: signInKey(ip, email), windowSeconds: SIGN_IN_WINDOW_SECONDS, limit: SIGN_IN_FAILURES },
      { key: `sign-in:${ip}`, windowSeconds: MINUTE, limit: this.accounts.signInsPerMinute },
    ]);
    const failures = counts.find((c) => c.key === signInKey(ip, email))!;
    if (failures.hits > failures.limit) {
      throw new AppError('RATE_LIMITED', 'Too many failed sign-ins; try again in 15 minutes.', { retryAfterSeconds: failures.retryAfterSeconds });
    }
    const address = counts.find((c) => c.key !== failures.key)!;
    if (address.hits > address.limit) {
      throw new AppError('RATE_LIMITED', 'Too many sign-ins from this address; wait a minute and try again.', { retryAfterSeconds: address.retryAfterSeconds });
    }
  }

  /** Counts a sign-up of this address. Throws RATE_LIMITED over RATE_LIMIT_SIGNUP_PER_HOUR. */
  async admitSignUp(em: Em, ip: string): Promise<void> {
    const [count] = await this.count(em, [{ key: `sign-up:${ip}`, windowSeconds: 60 * MINUTE, limit: this.accounts.signUpsPerHour }]);
    if (count!.hits > count!.limit) {
      throw new AppError('RATE_LIMITED', 'Too many sign-ups from this address; try again later.', { retryAfterSeconds: count!.retryAfterSeconds });
    }
  }

  /** A sign-in succeeded: its address and email start again from zero. */
  async signedIn(em: Em, ip: string, email: string): Promise<void> {
    await forget(em, signInKey(ip, email));
    currentRateMeter()?.forget(signInKey(ip, email));
  }

  /** Gives reserved queries back and waits for background work; the database must still be open. */
  async close(em: Em): Promise<void> {
    this.closed = true;
    await this.pruning;
    await this.queries.close(em);
  }

  /** Counts the hits, and tells the request's meter what is left of each budget. */
  private async count(em: Em, hits: Hit[]): Promise<Count[]> {
    const counts = await this.hits.hit(em, hits);
    this.pruneNowAndThen(em);
    const meter = currentRateMeter();
    for (const c of counts) meter?.record(c.key, { limit: c.limit, remaining: c.remaining, resetSeconds: c.retryAfterSeconds });
    return counts;
  }

  /** In the background: a request never waits for it, and a failure only delays it. */
  private pruneNowAndThen(em: Em): void {
    const now = Date.now();
    if (this.closed || this.pruning || now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    this.pruning = prune(em)
      .catch(() => {})
      .finally(() => {
        this.pruning = null;
      });
  }
}

function signInKey(ip: string, email: string): string {
  return `sign-in:${ip}|${email}`;
}
