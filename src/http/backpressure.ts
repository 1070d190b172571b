import type { ServerResponse } from 'node:http';

/**
 * Resolves once `res` can take more (its buffer drained) or its client is gone. A stream's
 * producer awaits this after each write the socket could not take at once, so a client that
 * reads slowly holds the model stream back instead of growing our buffer without bound.
 */
export function writable(res: ServerResponse): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Resolves once everything written to `res` has reached the socket (or the client is gone).
 * For a writer that waits for each write's callback, so `res` never holds enough to ask for a
 * drain: what it holds at all is the sign the client is not reading. No event says "empty"
 * below the high-water mark, hence the short poll, only while something is held.
 */
export async function flushed(res: ServerResponse): Promise<void> {
  while (!res.destroyed && res.writableLength > 0) {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, 25);
      res.on('drain', done);
      res.on('close', done);
    });
  }
}

/**
 * `source`, pulled only once what was written to `res` has been flushed: graphql-sse reads a
 * subscription's results into a queue of its own as fast as they come, so without this a client
 * that stops reading would grow that queue instead of holding the producer (the model stream)
 * back. Ending it (`return`) still reaches the source at once.
 */
export function heldBy<T>(res: ServerResponse, source: AsyncIterator<T>): AsyncIterableIterator<T> {
  return {
    next: async () => {
      await flushed(res);
      return source.next();
    },
    return: (value?: unknown) => source.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined as T }),
    throw: (error?: unknown) => source.throw?.(error) ?? Promise.reject(error),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
