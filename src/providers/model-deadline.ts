/**
 * The model endpoint's deadline: it must send its first token, and each next one, within
 * MODEL_TIMEOUT_MS. A deadline is a timer re-armed by every token and paused while our own
 * consumer holds the stream (a slow client is not a slow model); when it fires, the request is
 * aborted through `signal`, which also follows the caller's own signal.
 */
export interface ModelDeadline {
  /** Aborted by the caller or by the deadline: give it to the request. */
  readonly signal: AbortSignal;
  /** Whether the deadline (not the caller) stopped the request. */
  readonly expired: boolean;
  /** Something arrived: the next piece has `ms` again. */
  rearm(): void;
  /** We hold the stream (a yield to our reader): the endpoint is not waited on meanwhile. */
  pause(): void;
  /** The request is over: no timer is left behind. */
  clear(): void;
}

export function modelDeadline(ms: number, caller?: AbortSignal): ModelDeadline {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | null = null;
  let expired = false;
  const onCallerAbort = () => controller.abort(caller!.reason);
  if (caller?.aborted) controller.abort(caller.reason);
  else caller?.addEventListener('abort', onCallerAbort, { once: true });
  const pause = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  const rearm = () => {
    pause();
    if (controller.signal.aborted) return;
    timer = setTimeout(() => {
      expired = true;
      controller.abort(new Error(`The model endpoint sent nothing for ${ms} ms.`));
    }, ms);
  };
  rearm();
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    rearm,
    pause,
    clear: () => {
      pause();
      caller?.removeEventListener('abort', onCallerAbort);
    },
  };
}
