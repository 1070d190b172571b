/** The small pieces every framework-free handler of the server chain shares. */
import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The path of a request URL without its query string (where links and tokens travel). */
export function pathnameOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return q === -1 ? raw : raw.slice(0, q);
}

/** A JSON answer; after headers went out (a stream), only ends the response. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), ...headers });
  res.end(json);
}

/** A file of a known size streamed from disk, with `headers`; HEAD gets the headers alone. */
export function sendFile(req: IncomingMessage, res: ServerResponse, file: string, size: number, headers: Record<string, string>): void {
  res.writeHead(200, { ...headers, 'content-length': size });
  if (req.method === 'HEAD') return void res.end();
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}
