/**
 * The last line of defence: an error nothing caught. Every request's own errors are answered
 * by the transports, so reaching here is a bug of ours; it is logged with the id of the
 * request it happened in (the log context survives into these handlers), and the rule is:
 *
 * - an unhandled promise rejection: log and keep serving. A promise holds no resources
 *   across the rejection; the request it belonged to has been answered or will time out.
 * - an uncaught exception inside a request's context: log and keep serving. It came from one
 *   request's callbacks (a stream, a timer), which hold only that request's state; stopping
 *   would end every other user's requests for one request's bug.
 * - an uncaught exception outside any request (start-up, a worker, a timer of the server
 *   itself): the process state is unknown, so log it and exit 1; a supervisor restarts it.
 */
import { currentRequestId, type Logger } from '../logger.ts';

export interface GuardedProcess {
  on(event: 'uncaughtException', listener: (error: Error) => void): unknown;
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
}

export function installProcessGuard(proc: GuardedProcess, logger: Logger, exit: (code: number) => void): void {
  proc.on('unhandledRejection', (reason) => {
    // The logger adds the request id of the request it happened in, if any.
    logger.error('unhandled promise rejection; still serving', { error: reason });
  });
  proc.on('uncaughtException', (error) => {
    if (currentRequestId()) {
      logger.error('uncaught exception while serving a request; still serving', { error });
      return;
    }
    logger.error('uncaught exception outside any request; exiting', { error });
    exit(1);
  });
}
