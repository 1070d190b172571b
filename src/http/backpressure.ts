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
