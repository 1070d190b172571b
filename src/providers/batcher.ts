/**
 * Gathers calls that arrive while a shared resource is busy into one run of it. A call waits for
 * its turn at `exclusive`; when the turn comes, every call still waiting goes in that run (up to
 * `maxCount` inputs and `maxWeight` in total, at least one), so N concurrent callers cost about
 * one run instead of N runs one after another. Used for the local embedding model, whose cost
 * per text falls when texts are embedded together and which runs one batch at a time.
 */
export class Batcher<I, O> {
  private pending: Waiting<I, O>[] = [];
  private queued = false;

  constructor(
    /** Runs `fn` when the resource is free (one at a time). */
    private readonly exclusive: (fn: () => Promise<void>) => Promise<unknown>,
    private readonly maxCount: number,
    private readonly maxWeight: number,
    private readonly weight: (input: I) => number,
    /** One output per input, same order. */
    private readonly run: (inputs: I[]) => Promise<O[]>,
  ) {}

  /** The output for `input`, from the next run that has room for it. An aborted call leaves at once and is not run. */
  add(input: I, signal?: AbortSignal): Promise<O> {
    signal?.throwIfAborted();
    return new Promise<O>((resolve, reject) => {
      const waiting: Waiting<I, O> = { input, resolve, reject };
      if (signal) {
        const onAbort = () => {
          const i = this.pending.indexOf(waiting);
          if (i >= 0) this.pending.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiting.done = () => signal.removeEventListener('abort', onAbort);
      }
      this.pending.push(waiting);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.queued || !this.pending.length) return;
    this.queued = true;
    void this.exclusive(() => this.drain());
  }

  private async drain(): Promise<void> {
    this.queued = false;
    const batch: Waiting<I, O>[] = [];
    let weight = 0;
    while (this.pending.length && batch.length < this.maxCount) {
      const w = this.weight(this.pending[0]!.input);
      if (batch.length && weight + w > this.maxWeight) break;
      batch.push(this.pending.shift()!);
      weight += w;
    }
    // What did not fit waits for the next turn, behind whoever queued meanwhile.
    this.schedule();
    if (!batch.length) return;
    for (const b of batch) b.done?.();
    try {
      const out = await this.run(batch.map((b) => b.input));
      if (out.length !== batch.length) throw new Error(`a batch of ${batch.length} inputs gave ${out.length} outputs`);
      batch.forEach((b, i) => b.resolve(out[i]!));
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }
}

interface Waiting<I, O> {
  input: I;
  resolve(output: O): void;
  reject(err: unknown): void;
  /** Stops listening for the caller's abort once the input is in a run. */
  done?: () => void;
}
