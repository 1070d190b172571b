/**
 * Requests Node's HTTP parser refuses before any handler sees them (headers or URL over the
 * 16 KiB limit, a malformed request line, a header with a bad character). Node would answer them
 * itself with an empty body; this gives them the service's JSON error, as every other 4xx has.
 */
import type { Duplex } from 'node:stream';
import { errorBody } from '../errors.ts';

export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const message =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'The request line and headers are too large (16 KiB at most): send long values in the body.'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'The request took too long to arrive.'
        : 'The request is not valid HTTP.';
  const body = JSON.stringify(errorBody('BAD_USER_INPUT', message));
  socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
