/**
 * The progress watchdog of a job. pg-boss's heartbeat says the worker process is alive; it beats
 * on a timer, so a live worker whose handler awaits something that never settles (an endpoint
 * that accepted the request and never answers, a lock that is never released) keeps its job
 * until expireInSeconds. A handler reports progress at its natural points (each stage, each
 * batch); when none comes for JOB_STALL_SECONDS the job is declared stalled: its signal aborts
 * (fetches and model calls given it stop) and whatever awaits `guard()` is released with a
 * JobStalled error naming the stage, whether or not the stuck work heeds the abort.
 */

/** No progress for `seconds` while the job was at `stage`. Transient: another attempt may get through. */
export class JobStalled extends Error {
  constructor(
    readonly stage: string,
    readonly seconds: number,
  ) {
    super(`No progress for ${seconds} s while ${stage}.`);
    this.name = 'JobStalled';
  }
}

export interface Progress {
  /** The job reached `stage` ("embedding chunks 65-128 of 300"): the stall clock starts again. */
  step(stage: string): void;
  /** `work`'s outcome, or JobStalled as soon as the job stalls, even if `work` never settles. */
  guard<T>(work: Promise<T>): Promise<T>;
  /** Aborts when the job stalls (its reason a JobStalled), when pg-boss takes the job back, or when the worker stops. */
  readonly signal: AbortSignal;
}

export interface Watch extends Progress {
  /** The handler's outcome; a stalled handler that has not settled `graceMs` after the stall is given up with JobStalled. */
  settle<T>(work: Promise<T>, graceMs: number): Promise<T>;
  /** Stops the clock (the job is over). */
  stop(): void;
}

/**
 * Starts the clock of one job; `stallMs` 0 watches nothing (the job runs as it would unwatched).
 * The clock is read every tenth of the bound (at most every 5 s), so a stall is declared within
 * 1.1 × stallMs of the last progress.
 */
export function watchJob(stallMs: number, parent?: AbortSignal, firstStage = 'starting the job'): Watch {
  const controller = new AbortController();
  const signal = parent ? AbortSignal.any([parent, controller.signal]) : controller.signal;
  let stage = firstStage;
  let last = performance.now();
  let declare!: (error: JobStalled) => void;
  const stalled = new Promise<never>((_, reject) => (declare = reject));
  // Nobody may be awaiting it when it rejects.
  stalled.catch(() => {});
  const timer =
    stallMs > 0
      ? setInterval(
          () => {
            if (performance.now() - last < stallMs) return;
            clearInterval(timer!);
            const error = new JobStalled(stage, Number((stallMs / 1000).toFixed(1)));
            controller.abort(error);
            declare(error);
          },
          Math.min(stallMs / 10, 5000),
        )
      : null;
  // A watch never keeps a stopping process alive.
  timer?.unref();
  const guard = <T>(work: Promise<T>) => Promise.race([work, stalled]);
  return {
    signal,
    step(next) {
      stage = next;
      last = performance.now();
    },
    guard,
    settle(work, graceMs) {
      const givenUp = stalled.catch((error: unknown) => new Promise<never>((_, reject) => setTimeout(() => reject(error), graceMs).unref()));
      return Promise.race([work, givenUp]);
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
