/**
 * Every request gets an id (the caller's `x-request-id` when it is sane, else a new one),
 * returned in the `x-request-id` response header, attached to every log line written while the
 * request is served, and one access line when the response is done.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { withLogContext, type Logger } from '../logger.ts';
import { pathnameOf } from './respond.ts';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Printable ASCII, at most 128 characters: anything else could forge or flood log lines. */
const SANE_ID = /^[\x21-\x7e](?:[\x20-\x7e]{0,126}[\x21-\x7e])?$/;

export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
}

/** Wraps a node:http listener: the id, its header, its log context, the access line. */
export function withRequestLog(logger: Logger, handle: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const requestId = requestIdOf(req);
    const started = process.hrtime.bigint();
    const socket = req.socket;
    const bytesBefore = socket.bytesWritten;
    res.setHeader(REQUEST_ID_HEADER, requestId);
    res.once('close', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // The query string is left out: links and tokens travel there.
      const path = pathnameOf(req.url);
      const fields = {
        requestId,
        method: req.method,
        path,
        status: res.statusCode,
        durationMs: Math.round(durationMs * 100) / 100,
        bytes: socket.bytesWritten - bytesBefore,
        ...(res.writableFinished ? {} : { aborted: true }),
      };
      logger.info('request', fields);
    });
    withLogContext({ requestId }, () => handle(req, res));
  };
}
