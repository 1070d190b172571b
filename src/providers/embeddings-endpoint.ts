/**
 * The OpenAI-compatible embeddings call, `POST {baseUrl}/embeddings`, over node:http(s) with
 * kept-alive sockets and nothing in between. It replaced @langchain/openai's OpenAIEmbeddings
 * (over the openai SDK and fetch) because a datastore query pays one embedding before its SQL, and
 * in the service that pipeline cost about 2 ms of CPU and 1.4 ms of latency a call against 0.4 ms
 * of CPU for this (docs/benchmarks.md, "Issue 19, stop 11"). What it keeps of theirs: newlines sent
 * as spaces (the vectors stored before it match the queries after it), base64 asked for and float
 * arrays accepted, a call's batches two at a time, and retries of 408, 409, 429, 5xx and of
 * connections that fail, with backoff.
 */
import http from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';

export interface EmbeddingsEndpointOptions {
  /** e.g. https://api.openai.com/v1 */
  baseUrl: string;
  apiKey: string;
  /** Sockets to the endpoint at once (MODEL_MAX_SOCKETS). */
  maxSockets?: number;
  /** Per attempt. */
  timeoutMs: number;
  /** Attempts after the first, for the failures above. */
  maxRetries: number;
  /** Keep sockets open between calls (default true; a one-time probe closes its own). */
  keepAlive?: boolean;
}

export interface EmbeddingsRequest {
  model: string;
  input: string[];
  /** Only models that take it (text-embedding-3 and later). */
  dimensions?: number;
}

/** Why a call failed, as the end of a sentence about the endpoint ("answered 401: …", "could not be reached: …"). */
export class EndpointCallError extends Error {
  override name = 'EndpointCallError';

  constructor(
    message: string,
    readonly kind: 'status' | 'timeout' | 'network' | 'malformed',
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Inputs of one call sent at a time (as LangChain's caller did). */
const BATCHES_AT_ONCE = 2;
/** The most of an error answer kept for its message. */
const ERROR_BODY_BYTES = 64 * 1024;

export type EmbeddingsCall = (request: EmbeddingsRequest, batchSize: number, signal?: AbortSignal) => Promise<ArrayLike<number>[]>;

export function createEmbeddingsEndpoint(opts: EmbeddingsEndpointOptions): EmbeddingsCall {
  const url = new URL(`${opts.baseUrl.replace(/\/+$/, '')}/embeddings`);
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:') throw new Error(`The embeddings endpoint must be an http(s) URL, got ${opts.baseUrl}`);
  const agent = new (secure ? https : http).Agent({ keepAlive: opts.keepAlive ?? true, maxSockets: opts.maxSockets ?? 256 });

  /** One request, one answer: the vectors in input order, or an EndpointCallError. */
  const post = (request: EmbeddingsRequest, signal?: AbortSignal): Promise<ArrayLike<number>[]> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({
        model: request.model,
        input: request.input.map((t) => t.replace(/\n/g, ' ')),
        encoding_format: 'base64',
        ...(request.dimensions ? { dimensions: request.dimensions } : {}),
      });
      let settled = false;
      const finish = (err: unknown, vectors?: ArrayLike<number>[]) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(vectors!);
      };
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${opts.apiKey}`,
        },
      });
      const onAbort = () => {
        req.destroy();
        finish(signal!.reason);
      };
      const timer = setTimeout(() => {
        req.destroy();
        finish(new EndpointCallError(`did not answer within ${opts.timeoutMs / 1000} s`, 'timeout'));
      }, opts.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      req.once('error', (err) => finish(new EndpointCallError(`could not be reached: ${err.message}`, 'network', undefined, { cause: err })));
      req.once('response', (res) => {
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (ok || size <= ERROR_BODY_BYTES) chunks.push(chunk);
        });
        res.once('error', (err) => finish(new EndpointCallError(`could not be reached: ${err.message}`, 'network', undefined, { cause: err })));
        res.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (!ok) return finish(new EndpointCallError(`answered ${status}: ${errorDetail(text, res.statusMessage)}`, 'status', status));
          try {
            finish(null, vectorsOf(JSON.parse(text), request.input.length));
          } catch (err) {
            finish(err instanceof EndpointCallError ? err : new EndpointCallError('answered something other than JSON', 'malformed', status, { cause: err }));
          }
        });
      });
      req.end(body);
    });

  /** `post`, again after a pause while the failure is one a later attempt may not meet. */
  const withRetries = async (request: EmbeddingsRequest, signal?: AbortSignal): Promise<ArrayLike<number>[]> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await post(request, signal);
      } catch (err) {
        if (signal?.aborted || attempt >= opts.maxRetries || !retryable(err)) throw err;
        // 1-2 s, then 2-4 s: spread so that callers failed together do not come back together.
        await sleep(1000 * 2 ** attempt * (1 + Math.random()), undefined, { signal });
      }
    }
  };

  return async (request, batchSize, signal) => {
    const batches: string[][] = [];
    for (let i = 0; i < request.input.length; i += batchSize) batches.push(request.input.slice(i, i + batchSize));
    const out: ArrayLike<number>[][] = new Array(batches.length);
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const i = next++;
        out[i] = await withRetries({ ...request, input: batches[i]! }, signal);
      }
    };
    await Promise.all(Array.from({ length: Math.min(BATCHES_AT_ONCE, batches.length) }, worker));
    return out.flat();
  };
}

function retryable(err: unknown): boolean {
  if (!(err instanceof EndpointCallError)) return false;
  if (err.kind === 'network') return true;
  return err.kind === 'status' && (err.status === 408 || err.status === 409 || err.status === 429 || err.status! >= 500);
}

/** The endpoint's own words: OpenAI's `{error: {message}}`, a plain `{message}` or `{detail}`, or the text. */
function errorDetail(text: string, statusMessage: string | undefined): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message ?? body.detail);
    if (typeof message === 'string' && message.trim()) return message.trim();
  } catch {
    // not JSON: the text itself
  }
  return text.trim().slice(0, 300) || statusMessage || 'no details';
}

/** `data[].embedding` in input order: base64 (little-endian float32, as asked) or an array of numbers. */
function vectorsOf(body: unknown, expected: number): ArrayLike<number>[] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new EndpointCallError('answered without a data array', 'malformed');
  if (data.length !== expected) throw new EndpointCallError(`returned ${data.length} vectors for ${expected} texts`, 'malformed');
  const items = data as { index?: unknown; embedding?: unknown }[];
  const ordered = items.every((d) => Number.isInteger(d?.index)) ? [...items].sort((a, b) => (a.index as number) - (b.index as number)) : items;
  return ordered.map((d) => {
    const e = d?.embedding;
    if (typeof e === 'string') {
      const bytes = Buffer.from(e, 'base64');
      if (bytes.length % 4) throw new EndpointCallError('returned a base64 vector that is not float32', 'malformed');
      // Copied to an aligned buffer of its own: a Float32Array cannot start at an odd offset of the pooled one.
      return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    }
    if (Array.isArray(e)) return e as number[];
    throw new EndpointCallError('returned something other than a vector', 'malformed');
  });
}
