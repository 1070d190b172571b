import type { EventBus } from './bus.ts';

/**
 * An async iterator over one bus channel, filtered. Events arriving faster than the consumer
 * reads are buffered (up to `max`, oldest dropped); `return()` unsubscribes.
 */
export async function busIterator<T>(
  bus: EventBus,
  channel: string,
  accept: (event: T) => boolean,
  max = 1000,
): Promise<AsyncIterableIterator<T>> {
  const buffer: T[] = [];
  let wake: (() => void) | null = null;
  let done = false;
  const unsubscribe = await bus.subscribe(channel, (payload) => {
    let event: T;
    try {
      event = JSON.parse(payload) as T;
    } catch {
      return;
    }
    if (!accept(event)) return;
    buffer.push(event);
    if (buffer.length > max) buffer.shift();
    wake?.();
  });
  const finish = () => {
    done = true;
    unsubscribe();
    wake?.();
  };
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      while (!done && buffer.length === 0) await new Promise<void>((r) => (wake = r));
      wake = null;
      if (buffer.length) return { value: buffer.shift()!, done: false };
      return { value: undefined, done: true };
    },
    async return() {
      finish();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
