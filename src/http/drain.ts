/**
 * Graceful drain (SIGTERM): the process keeps listening so that a load balancer's probe and
 * clients get a clear answer instead of a refused connection, but every new request, /readyz
 * included, is answered 503 SHUTTING_DOWN with `Connection: close` at once. Requests and streams
 * already in flight may finish during the grace; streams still open when it is over are ended
 * with an error naming the shutdown, in their own transport's way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { AppError, ERROR_CODES, errorBody, statusOf } from '../errors.ts';

/** After the grace, how long ended streams get to write their last frame before connections are cut. */
const LAST_WORDS_MS = 1_000;

export const shuttingDown = () => new AppError('SHUTTING_DOWN');

export class Drain {
  private open = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly graceOver = new AbortController();
  private started = false;

  /** Wraps the server's handler: counts what is in flight and refuses what is new once draining. */
  handle(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      if (this.started) return refuse(req, res);
      this.open++;
      res.once('close', () => {
        if (--this.open === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      });
      handler(req, res);
    };
  }

  /**
   * Starts refusing; resolves once nothing is in flight, or the grace is over, the streams still
   * open were told why they end (and had a moment to say so), and `cut` closed what remains (a
   * request that would not end, an idle graphql-sse reservation).
   */
  async drain(graceMs: number, cut: () => void): Promise<void> {
    this.started = true;
    if (await this.idleWithin(graceMs)) return;
    this.graceOver.abort();
    if (!(await this.idleWithin(LAST_WORDS_MS))) cut();
  }

  /** A GraphQL result stream (REST SSE, graphql-sse) that ends with a SHUTTING_DOWN error when the grace is over. */
  results<T>(iterator: AsyncIterator<T>): AsyncIterableIterator<T> {
    // The error is made only when it is sent: an error's stack is the dearest thing a stream would otherwise make.
    return endWhen(iterator, this.graceOver.signal, () => ({ value: { errors: [shuttingDown()] } satisfies ExecutionResult as T, done: false }));
  }

  /** An event stream (the /v1 protocols) that throws SHUTTING_DOWN when the grace is over. */
  events<T>(iterator: AsyncIterator<T>): AsyncIterableIterator<T> {
    return endWhen(iterator, this.graceOver.signal, () => {
      throw shuttingDown();
    });
  }

  private idleWithin(ms: number): Promise<boolean> {
    if (this.open === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

function refuse(req: IncomingMessage, res: ServerResponse) {
  req.resume(); // a body nobody reads would keep the socket from closing
  const json = JSON.stringify(errorBody('SHUTTING_DOWN', ERROR_CODES.SHUTTING_DOWN.message));
  res.writeHead(statusOf('SHUTTING_DOWN'), { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), connection: 'close', 'retry-after': '1' });
  res.end(json);
}

/**
 * Passes `iterator` through until `signal` aborts; then it stops the source (which cancels a
 * model call) and ends with `last()` (a final value, or a throw).
 *
 * The signal lives as long as the process, so the stream's hold on it ends with the stream: its
 * listener is removed once the stream is done, and a `next()` waits on the signal only while it
 * is in flight. A listener left behind (or a promise raced against the signal's, which collects
 * one reaction per `next()`) kept every finished stream reachable, with its request, response and
 * EntityManager: 23 KB of heap per stream, for good (bench:stream-heap).
 */
function endWhen<T>(iterator: AsyncIterator<T>, signal: AbortSignal, last: () => IteratorResult<T>): AsyncIterableIterator<T> {
  let ended = false;
  /** Settles the `next()` in flight when the grace ends; null while none waits. */
  let interrupt: (() => void) | null = null;
  const onAbort = () => interrupt?.();
  signal.addEventListener('abort', onAbort, { once: true });
  const finish = () => {
    ended = true;
    interrupt = null;
    signal.removeEventListener('abort', onAbort);
  };
  const stop = (): IteratorResult<T> => {
    finish();
    void Promise.resolve(iterator.return?.()).catch(() => {});
    return last();
  };
  const wrapped: AsyncIterableIterator<T> = {
    async next() {
      if (ended) return { value: undefined, done: true };
      if (signal.aborted) return stop();
      const pending = iterator.next();
      let result: IteratorResult<T> | typeof ABORTED;
      try {
        // A source failing after it was left is nobody's to report: its rejection lands here, unread.
        result = await new Promise<IteratorResult<T> | typeof ABORTED>((resolve, reject) => {
          interrupt = () => resolve(ABORTED);
          pending.then(resolve, reject);
        });
      } catch (err) {
        finish();
        throw err;
      }
      interrupt = null;
      if (result === ABORTED) return stop();
      if (result.done) finish();
      return result;
    },
    async return(value?: unknown) {
      finish();
      await iterator.return?.(value);
      return { value: value as T, done: true };
    },
    // graphql-sse ends an operation whose client left only if its iterator has all three methods
    // of a generator (isAsyncGenerator); without `throw` the source ran on after the client left.
    async throw(error?: unknown) {
      finish();
      await iterator.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return wrapped;
    },
  };
  return wrapped;
}

const ABORTED = Symbol('aborted');
