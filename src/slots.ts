/**
 * A counting semaphore for work that holds much memory (file parsers, media processes): at
 * most `max` run at once, the rest wait in order. A released slot is handed straight to the
 * next waiter, so a newcomer can never slip in between and exceed `max`.
 */
export class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  /** `maxWaiting`: past it, `run` throws `busy()` instead of queueing. */
  constructor(
    private readonly max: number,
    private readonly maxWaiting = Infinity,
    private readonly busy: () => Error = () => new Error('Too many waiting.'),
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.max) this.running++;
    else {
      if (this.waiting.length >= this.maxWaiting) throw this.busy();
      await new Promise<void>((resolve) => this.waiting.push(resolve)); // the slot is handed over, already counted
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
