/**
 * The one stream of a conversation turn, for answers and forms alike. It starts producing at
 * once (the model request is on its way while the caller sets up its transport), and when the
 * turn ends before it is stored complete (the client left, the model failed), it cancels the
 * model call and settles: the partial reply is kept, and the query is given back unless the
 * visitor chose to stop (a model that failed or went silent is not the organization's to pay).
 */

/** What a producer is given. */
export interface TurnControl {
  /** Aborted when the turn stops early: pass it to the model call. */
  readonly signal: AbortSignal;
  /** Records text said to the visitor: what a partial reply keeps. */
  said(text: string): void;
  /** Everything `said` so far: the reply, when it is stored complete. */
  readonly text: string;
  /** The turn is stored complete: stopping after this settles nothing. */
  done(): void;
}

/** Why a turn stopped before it was stored complete. */
export type TurnEnd = 'left' | 'failed';

/**
 * `events` yields what `produce` yields; `return()` stops the model call at once, even mid-chunk.
 * `settle` runs when the turn stops before `done()`, given the text said so far ('' when none)
 * and why: `left` (the reader stopped reading) or `failed` (the producer threw, e.g. the model
 * endpoint failed or timed out). Its failures are not the caller's.
 */
export function turnStream<E>(produce: (turn: TurnControl) => AsyncGenerator<E>, settle: (said: string, end: TurnEnd) => Promise<unknown>): AsyncIterableIterator<E> {
  const controller = new AbortController();
  let text = '';
  let finished = false;
  const control: TurnControl = {
    signal: controller.signal,
    said: (piece) => {
      text += piece;
    },
    get text() {
      return text;
    },
    done: () => {
      finished = true;
    },
  };
  async function* run(): AsyncGenerator<E> {
    let end: TurnEnd = 'left';
    try {
      yield* produce(control);
    } catch (err) {
      // Our own abort (the reader left) surfaces as the model call's error: that is still leaving.
      if (!controller.signal.aborted) end = 'failed';
      throw err;
    } finally {
      if (!finished) {
        controller.abort();
        await settle(text, end).catch(() => {});
      }
    }
  }
  const generator = run();
  // Started now, so the generator is always running when it is left: its finally settles the turn.
  let first: Promise<IteratorResult<E>> | null = generator.next();
  first.catch(() => {}); // reported to whoever reads it; never an unhandled rejection
  const events: AsyncIterableIterator<E> = {
    next: () => {
      const pending = first;
      first = null;
      return pending ?? generator.next();
    },
    return: (value?: unknown) => {
      first = null;
      // A turn stored complete has no model call left to cancel (an abort also costs an error and its stack).
      if (!finished) controller.abort();
      return generator.return(value as never);
    },
    throw: (error?: unknown) => generator.throw(error),
    [Symbol.asyncIterator]() {
      return events;
    },
  };
  return events;
}
