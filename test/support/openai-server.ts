/**
 * A small OpenAI-compatible server for tests: embeddings, chat completions (plain and
 * streamed), audio transcriptions and the model list, close enough to the real protocol that
 * the real openai / @langchain/openai clients work against it (point them at `url` with
 * `configuration.baseURL`). It is the only stand-in for the outside model endpoint.
 */
import { createHash } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON; for multipart `{ fields, files }` with file sizes, not contents; null when empty. */
  body: any;
}

export interface OpenAiTestServer {
  /** e.g. http://127.0.0.1:PORT/v1 (use as OPENAI_BASE_URL). */
  url: string;
  requests: RecordedRequest[];
  /** Chat replies: a function from the request body to the reply text (default: echoes "You asked: <last user message>"). */
  setChatReply(fn: (body: any) => string): void;
  /** Delay per streamed token in ms (default 0) and optional delay before the first token. */
  setStreamTiming(opts: { firstTokenDelayMs?: number; tokenDelayMs?: number }): void;
  /** Hold every answer to a path (e.g. "/v1/embeddings") for this long before replying; 0 removes it. */
  setDelay(path: string, ms: number): void;
  /** Text of every transcription (default "transcribed audio"). */
  setTranscription(text: string): void;
  /**
   * Make the next N requests to a path ("/v1/embeddings" or "/embeddings") fail with this
   * status and body (default: an OpenAI-style `{ error: { message, type, code } }`).
   */
  failNext(path: string, status: number, count?: number, body?: unknown): void;
  /**
   * A chat endpoint that misbehaves until set back to null: `hang` never answers (not even
   * headers); `stopAfterTokens` streams that many tokens, then sends nothing more. Either way the
   * connection stays open until the client gives up.
   */
  setChatFault(fault: ChatFault | null): void;
  /** Streamed chat tokens written so far (all requests). */
  chatTokensSent: () => number;
  /** Chat requests whose response is neither complete nor abandoned by its client. */
  chatInFlight: () => number;
  /** TCP connections currently open to this server (kept-alive ones included). */
  openConnections: () => number;
  /** Count of chat streams whose client went away before the end. */
  aborted: () => number;
  /** Resolves once `aborted()` reaches `count` (default 1). */
  whenAborted(count?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * `endless` streams `piece` until the client leaves, waiting whenever the connection cannot take
 * more (as a real server's socket does), so a reader that stops reading stops it too.
 */
export type ChatFault = { hang: true } | { stopAfterTokens: number } | { endless: string };

export interface OpenAiTestServerOptions {
  /** Vector size when the request has no `dimensions` (default 1536, like text-embedding-3-small). */
  embeddingDimension?: number;
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401 like the real API. */
  apiKey?: string;
  /** Answer embeddings as float arrays whatever `encoding_format` asks, as some compatible servers do. */
  ignoreEncodingFormat?: boolean;
}

const MODELS = ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002', 'whisper-1'];

/** The real API's limit on inputs per embeddings request. */
const MAX_EMBEDDING_INPUTS = 2048;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

function errorBody(status: number, message: string, type: string, code: string | null, param: string | null = null) {
  return { error: { message, type, param, code } };
}

function defaultFailure(status: number) {
  switch (status) {
    case 401:
      return errorBody(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    case 403:
      return errorBody(403, 'You are not allowed to use this model.', 'invalid_request_error', 'model_not_allowed');
    case 404:
      return errorBody(404, 'The model does not exist or you do not have access to it.', 'invalid_request_error', 'model_not_found');
    case 429:
      return errorBody(429, 'Rate limit reached for requests.', 'requests', 'rate_limit_exceeded');
    default:
      return status >= 500
        ? errorBody(status, 'The server had an error while processing your request.', 'server_error', null)
        : errorBody(status, `Request failed with status ${status}.`, 'invalid_request_error', null);
  }
}

// ---- embeddings: a hashed bag of words, so texts sharing words get close vectors ----

function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => (w.length > 3 && w.endsWith('s') ? w.slice(0, -1) : w));
}

function hashedVector(tokens: string[], dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const token of tokens) {
    const h = createHash('sha1').update(token).digest();
    const i = h.readUInt32LE(0) % dims;
    v[i]! += h[4]! & 1 ? 1 : -1;
  }
  let sum = 0;
  for (const x of v) sum += x * x;
  // No words: still a valid, deterministic unit vector.
  if (sum === 0) {
    v[0] = 1;
    return v;
  }
  const scale = 1 / Math.sqrt(sum);
  return v.map((x) => x * scale);
}

function float32Base64(v: number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  return buf.toString('base64');
}

// ---- chat ----

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && (part as any).type === 'text' ? String((part as any).text ?? '') : ''))
      .join('');
  }
  return '';
}

function defaultChatReply(body: any): string {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const lastUser = [...messages].reverse().find((m) => m?.role === 'user');
  return `You asked: ${textOf(lastUser?.content)}`;
}

/** Word-boundary pieces that concatenate back to the text, each with its leading space like real tokens. */
function tokenize(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

function countTokens(text: string): number {
  return tokenize(text).length;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- multipart (just enough for audio uploads) ----

interface Multipart {
  fields: Record<string, string>;
  files: Array<{ field: string; filename: string; contentType: string | null; size: number }>;
}

function parseMultipart(body: Buffer, contentType: string): Multipart {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!m) throw new HttpError(400, 'Missing multipart boundary.');
  const delimiter = Buffer.from(`--${m[1] ?? m[2]}`);
  const out: Multipart = { fields: {}, files: [] };
  let pos = body.indexOf(delimiter);
  while (pos !== -1) {
    const start = pos + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    // Each part: CRLF, headers, CRLF CRLF, content, CRLF, then the next delimiter.
    const part = body.subarray(start + 2, next - 2);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd !== -1) {
      const headers = part.subarray(0, headerEnd).toString('utf8');
      const content = part.subarray(headerEnd + 4);
      const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
      const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
      if (filename !== undefined) {
        const type = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim() ?? null;
        out.files.push({ field: name, filename, contentType: type, size: content.length });
      } else {
        out.fields[name] = content.toString('utf8');
      }
    }
    pos = next;
  }
  return out;
}

// ---- the server ----

export async function startOpenAiTestServer(opts: OpenAiTestServerOptions = {}): Promise<OpenAiTestServer> {
  const defaultDimension = opts.embeddingDimension ?? 1536;
  const requests: RecordedRequest[] = [];
  const failures = new Map<string, Array<{ status: number; body: unknown }>>();
  const delays = new Map<string, number>();
  let chatReply: (body: any) => string = defaultChatReply;
  let timing = { firstTokenDelayMs: 0, tokenDelayMs: 0 };
  let transcription = 'transcribed audio';
  let abortedStreams = 0;
  let chatFault: ChatFault | null = null;
  let tokensSent = 0;
  let chatInFlight = 0;
  const abortWaiters: Array<{ count: number; resolve: () => void }> = [];
  let nextId = 1;

  const normalise = (path: string) => (path.startsWith('/v1/') ? path : `/v1${path.startsWith('/') ? '' : '/'}${path}`);

  function noteAbort() {
    abortedStreams++;
    for (const w of abortWaiters.splice(0)) {
      if (abortedStreams >= w.count) w.resolve();
      else abortWaiters.push(w);
    }
  }

  function sendJson(res: ServerResponse, status: number, body: unknown) {
    const data = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(data),
      'x-request-id': `req_${nextId++}`,
    });
    res.end(data);
  }

  async function readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  function embeddings(body: any, res: ServerResponse) {
    const input: unknown = body?.input;
    if (!body?.model) throw new HttpError(400, 'you must provide a model parameter', 'invalid_request_error', null, 'model');
    const list: unknown[] = Array.isArray(input) && !input.every((x) => typeof x === 'number') ? input : [input];
    if (input === undefined || list.length === 0) throw new HttpError(400, "'$.input' is invalid. Please check the API reference.", 'invalid_request_error', null, 'input');
    if (list.length > MAX_EMBEDDING_INPUTS) throw new HttpError(400, `'$.input' must have at most ${MAX_EMBEDDING_INPUTS} items.`, 'invalid_request_error', null, 'input');
    const dims = body.dimensions ?? defaultDimension;
    if (!Number.isInteger(dims) || dims < 1) throw new HttpError(400, 'dimensions must be a positive integer.', 'invalid_request_error', null, 'dimensions');
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64') throw new HttpError(400, `Invalid encoding_format: ${format}`, 'invalid_request_error', null, 'encoding_format');
    let promptTokens = 0;
    const data = list.map((item, index) => {
      // Token arrays are accepted like the real API; their ids stand in for words.
      let tokens: string[];
      if (typeof item === 'string') {
        if (item === '') throw new HttpError(400, "'$.input' is invalid. Please check the API reference.", 'invalid_request_error', null, 'input');
        tokens = words(item);
        promptTokens += Math.max(1, countTokens(item));
      } else if (Array.isArray(item) && item.every((x) => typeof x === 'number')) {
        tokens = item.map(String);
        promptTokens += item.length;
      } else {
        throw new HttpError(400, "'$.input' is invalid. Please check the API reference.", 'invalid_request_error', null, 'input');
      }
      const vector = hashedVector(tokens, dims);
      const asBase64 = format === 'base64' && !opts.ignoreEncodingFormat;
      return { object: 'embedding', index, embedding: asBase64 ? float32Base64(vector) : vector };
    });
    sendJson(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } });
  }

  async function chat(body: any, res: ServerResponse) {
    if (!body?.model) throw new HttpError(400, 'you must provide a model parameter', 'invalid_request_error', null, 'model');
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      throw new HttpError(400, "'messages' must contain at least one message.", 'invalid_request_error', null, 'messages');
    }
    const id = `chatcmpl-test${nextId++}`;
    const created = Math.floor(Date.now() / 1000);
    const model: string = body.model;
    let pieces = tokenize(chatReply(body));
    let finishReason = 'stop';
    const limit = body.max_completion_tokens ?? body.max_tokens;
    if (typeof limit === 'number' && limit >= 0 && pieces.length > limit) {
      pieces = pieces.slice(0, limit);
      finishReason = 'length';
    }
    const content = pieces.join('');
    const promptTokens = body.messages.reduce((n: number, m: any) => n + countTokens(textOf(m?.content)) + 3, 0);
    const usage = { prompt_tokens: promptTokens, completion_tokens: pieces.length, total_tokens: promptTokens + pieces.length };
    const n = Number.isInteger(body.n) && body.n > 0 ? body.n : 1;
    const choiceIndexes = Array.from({ length: n }, (_, i) => i);

    if (!body.stream) {
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        system_fingerprint: 'fp_test',
        choices: choiceIndexes.map((index) => ({
          index,
          message: { role: 'assistant', content, refusal: null },
          logprobs: null,
          finish_reason: finishReason,
        })),
        usage,
      });
      return;
    }

    const includeUsage = body.stream_options?.include_usage === true;
    const fault = chatFault;
    let gone = false;
    const onGone = () => {
      if (!res.writableFinished && !gone) {
        gone = true;
        noteAbort();
      }
    };
    // 'close' before 'finish' means the client dropped the socket mid-stream. (The request's own
    // 'close' is no signal: it fires as soon as its body has been read.)
    res.on('close', onGone);

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-request-id': `req_${nextId}`,
    });
    const send = (chunk: unknown) => {
      if (!gone) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    };
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_test',
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    });

    send(chunk(choiceIndexes.map((index) => ({ index, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }))));
    if (timing.firstTokenDelayMs > 0) await sleep(timing.firstTokenDelayMs);
    if (fault && 'endless' in fault) {
      const frame = `data: ${JSON.stringify(chunk(choiceIndexes.map((index) => ({ index, delta: { content: fault.endless }, logprobs: null, finish_reason: null }))))}\n\n`;
      while (!gone) {
        tokensSent++;
        if (!res.write(frame)) {
          await new Promise<void>((resolve) => {
            const go = () => (res.off('drain', go), res.off('close', go), resolve());
            res.on('drain', go).on('close', go);
          });
        }
      }
      return;
    }
    const stopAt = fault && 'stopAfterTokens' in fault ? fault.stopAfterTokens : Infinity;
    for (let i = 0; i < pieces.length && !gone; i++) {
      if (i >= stopAt) return new Promise<void>((resolve) => res.once('close', resolve)); // silent until the client leaves
      if (i > 0 && timing.tokenDelayMs > 0) await sleep(timing.tokenDelayMs);
      send(chunk(choiceIndexes.map((index) => ({ index, delta: { content: pieces[i] }, logprobs: null, finish_reason: null }))));
      tokensSent++;
    }
    if (gone) return;
    send(chunk(choiceIndexes.map((index) => ({ index, delta: {}, logprobs: null, finish_reason: finishReason }))));
    if (includeUsage) send(chunk([], { usage }));
    res.end('data: [DONE]\n\n');
  }

  function transcribe(body: Multipart, res: ServerResponse) {
    if (!body.files.some((f) => f.field === 'file')) throw new HttpError(400, "'file' is a required property", 'invalid_request_error', null, 'file');
    if (!body.fields.model) throw new HttpError(400, "'model' is a required property", 'invalid_request_error', null, 'model');
    const format = body.fields.response_format ?? 'json';
    if (format === 'text') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${transcription}\n`);
    } else if (format === 'verbose_json') {
      sendJson(res, 200, {
        task: 'transcribe',
        language: body.fields.language ?? 'english',
        duration: 1,
        text: transcription,
        segments: [{ id: 0, seek: 0, start: 0, end: 1, text: transcription, tokens: [], temperature: 0, avg_logprob: 0, compression_ratio: 1, no_speech_prob: 0 }],
      });
    } else if (format === 'json') {
      sendJson(res, 200, { text: transcription });
    } else {
      throw new HttpError(400, `Unsupported response_format: ${format}`, 'invalid_request_error', null, 'response_format');
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const contentType = String(req.headers['content-type'] ?? '');
    const recorded: RecordedRequest = { method, path, headers: { ...req.headers }, body: null };
    requests.push(recorded);

    let body: any = null;
    if (raw.length > 0) {
      if (contentType.startsWith('multipart/form-data')) body = parseMultipart(raw, contentType);
      else {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          throw new HttpError(400, 'We could not parse the JSON body of your request.');
        }
      }
    }
    recorded.body = body;

    const delay = delays.get(path);
    if (delay) await sleep(delay);
    if (res.destroyed) return;

    const queued = failures.get(path);
    if (queued?.length) {
      const failure = queued.shift()!;
      if (typeof failure.body === 'string') {
        res.writeHead(failure.status, { 'content-type': 'text/plain' });
        res.end(failure.body);
      } else sendJson(res, failure.status, failure.body);
      return;
    }

    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      throw new HttpError(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    }

    const route = `${method} ${path}`;
    if (route === 'POST /v1/embeddings') return embeddings(body, res);
    if (route === 'POST /v1/chat/completions') {
      chatInFlight++;
      let counted = true;
      const settle = () => {
        if (counted) chatInFlight--;
        counted = false;
      };
      res.once('close', settle);
      res.once('finish', settle);
      if (chatFault && 'hang' in chatFault) {
        // Nothing at all, not even headers, until the client gives up.
        res.socket?.once('close', () => noteAbort());
        return;
      }
      return chat(body, res);
    }
    if (route === 'POST /v1/audio/transcriptions') {
      if (!contentType.startsWith('multipart/form-data')) throw new HttpError(400, 'Expected a multipart/form-data body.');
      return transcribe(body as Multipart, res);
    }
    if (route === 'GET /v1/models') {
      return sendJson(res, 200, { object: 'list', data: MODELS.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'test' })) });
    }
    const model = /^\/v1\/models\/(.+)$/.exec(path);
    if (method === 'GET' && model) {
      const id = decodeURIComponent(model[1]!);
      if (!MODELS.includes(id)) throw new HttpError(404, `The model '${id}' does not exist`, 'invalid_request_error', 'model_not_found', 'model');
      return sendJson(res, 200, { id, object: 'model', created: 1_700_000_000, owned_by: 'test' });
    }
    throw new HttpError(404, `Unknown request URL: ${method} ${path}.`, 'invalid_request_error', 'unknown_url');
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof HttpError) sendJson(res, err.status, errorBody(err.status, err.message, err.type, err.code, err.param));
      else sendJson(res, 500, errorBody(500, String(err), 'server_error', null));
    });
  });
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // As the service's own (src/app.ts): a burst of 1,000 streams must not overflow the accept queue.
    server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    setChatReply(fn) {
      chatReply = fn;
    },
    setStreamTiming(t) {
      timing = { firstTokenDelayMs: t.firstTokenDelayMs ?? 0, tokenDelayMs: t.tokenDelayMs ?? 0 };
    },
    setDelay(path, ms) {
      const key = normalise(path.replace(/\/+$/, ''));
      if (ms > 0) delays.set(key, ms);
      else delays.delete(key);
    },
    setTranscription(text) {
      transcription = text;
    },
    failNext(path, status, count = 1, body) {
      const key = normalise(path.replace(/\/+$/, ''));
      const list = failures.get(key) ?? [];
      for (let i = 0; i < count; i++) list.push({ status, body: body ?? defaultFailure(status) });
      failures.set(key, list);
    },
    setChatFault(fault) {
      chatFault = fault;
    },
    chatInFlight: () => chatInFlight,
    chatTokensSent: () => tokensSent,
    openConnections: () => sockets.size,
    aborted: () => abortedStreams,
    whenAborted(count = 1) {
      if (abortedStreams >= count) return Promise.resolve();
      return new Promise<void>((resolve) => abortWaiters.push({ count, resolve }));
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets of the clients would hold close() open until they time out.
        server.closeAllConnections();
      });
    },
  };
}
