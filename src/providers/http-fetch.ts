/**
 * A `fetch` for the model clients over node:http(s) with kept-alive sockets. The openai SDK
 * (under LangChain) takes any fetch; Node's built-in one (undici) costs about a millisecond
 * more per request before the first byte leaves, which a streamed answer pays before its
 * first frame. Requests this transport cannot carry as they are (a FormData or stream body,
 * another protocol) go to the built-in fetch. Redirects are not followed: a model endpoint
 * that redirects is answered as its status, as a misconfiguration.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { contentDecoder } from './decompress.ts';

export interface HttpFetchOptions {
  /** Sockets per host (default 256). */
  maxSockets?: number;
}

export function createHttpFetch(opts: HttpFetchOptions = {}): typeof fetch {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 256 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 256 }),
  };

  return (async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
    if (input instanceof Request || !plainBody) return fetch(input, init);
    const url = typeof input === 'string' ? new URL(input) : input;
    const agent = agents[url.protocol as keyof typeof agents];
    if (!agent) return fetch(input, init);

    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    const headers = toRecord(init.headers);
    if (body !== undefined && body !== null && !('content-length' in headers)) headers['content-length'] = String(Buffer.byteLength(body));
    headers['accept-encoding'] ??= 'gzip, deflate, br';

    return new Promise<Response>((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(url, { method: init.method ?? 'GET', headers, agent }, (res) => {
        const status = res.statusCode ?? 500;
        const responseHeaders = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const decoded = decode(res, responseHeaders);
        res.once('close', () => signal?.removeEventListener('abort', onAbort));
        const nullBody = status === 204 || status === 205 || status === 304 || init.method === 'HEAD';
        if (nullBody) res.resume();
        resolve(new Response(nullBody ? null : (Readable.toWeb(decoded) as ReadableStream<Uint8Array>), { status, statusText: res.statusMessage ?? '', headers: responseHeaders }));
      });
      const onAbort = () => request.destroy(signal?.reason instanceof Error ? signal.reason : abortError());
      signal?.addEventListener('abort', onAbort, { once: true });
      request.once('error', (err) => {
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      });
      request.end(body ?? undefined);
    });
  }) as typeof fetch;
}

/** The body as sent (the Content-Encoding header is dropped once decoded, as fetch does). */
function decode(res: http.IncomingMessage, headers: Headers): Readable {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  const decoder = encoding ? contentDecoder(encoding) : null;
  if (!decoder) return res;
  headers.delete('content-encoding');
  headers.delete('content-length');
  res.once('error', (err) => decoder.destroy(err));
  return res.pipe(decoder);
}

function toRecord(headers: RequestInit["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  if (headers instanceof Headers || Array.isArray(headers)) for (const [k, v] of headers) out[k.toLowerCase()] = v;
  else for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = String(v);
  return out;
}

function abortError(): Error {
  return new DOMException('This operation was aborted', 'AbortError');
}
