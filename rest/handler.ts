/**
 * The REST transport: a framework-free handler over node:http (the hot public paths are
 * read by every chat widget; a framework's per-request cost would dominate them). It only
 * translates: path and body in, GraphQL execution against the shared schema, JSON out.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSourceEventStream, execute, parse, validate, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { requireMember } from '../src/access.ts';
import { AppError, errorBody, statusOf, type ErrorBody } from '../src/errors.ts';
import type { Context } from '../src/graphql/context.ts';
import { normalizeError } from '../src/graphql/errors.ts';
import type { Drain } from '../src/http/drain.ts';
import { drain, fileBodyLimit, readJsonBody, readMultipart } from '../src/http/body.ts';
import { writable } from '../src/http/backpressure.ts';
import type { ResourcePath } from '../src/http/cors.ts';
import { retryAfterOf } from '../src/http/rate-headers.ts';
import { assertStorableText } from '../src/graphql/text-guard.ts';
import { nameRoute } from '../src/metrics/http.ts';
import { pathFields, toRestError } from './fields.ts';
import type { OperationRoute, RestRequest, RestRoute } from './routes.ts';
import { encodeFrame, errorFrame, HEARTBEAT, type SseFrame } from './sse.ts';
import { sendJson } from '../src/http/respond.ts';

export interface RestHandlerOptions {
  schema: GraphQLSchema;
  routes: RestRoute[];
  /** e.g. "/api"; "" mounts the routes at the root. */
  basePath: string;
  bodyLimitBytes: number;
  /** Largest file in a multipart body. */
  uploadLimitBytes: number;
  /**
   * Builds the same per-request context GraphQL uses. Throws UNAUTHENTICATED for bad
   * credentials; with `authenticate: false` no credential is read (signed links).
   */
  context: (req: IncomingMessage, opts?: { authenticate: boolean }) => Promise<Context>;
  onInternalError: (error: unknown, req: IncomingMessage) => void;
  /** Ends streams still open when a shutdown's grace is over (src/http/drain.ts). */
  drain?: Drain;
}

interface CompiledRoute {
  route: RestRoute;
  pattern: RegExp;
  names: string[];
  document: DocumentNode | null;
  streamDocument: DocumentNode | null;
}

const HEARTBEAT_MS = 15_000;

/** Returns a handler that answers REST requests and returns false for anything else. */
export function createRestHandler(opts: RestHandlerOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const all = opts.routes.map((route) => compile(opts.schema, route));
  const rootRoutes = all.filter((c) => c.route.root);
  const compiled = all.filter((c) => !c.route.root);
  const prefix = opts.basePath;

  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q); // the query is read too (serve)
    for (const c of rootRoutes) {
      const m = c.route.method === req.method ? c.pattern.exec(pathname) : null;
      if (m) return void serve(c, m, url, q, req, res), true;
    }
    if (prefix && pathname !== prefix && !pathname.startsWith(`${prefix}/`)) return false;
    const path = pathname.slice(prefix.length) || '/';

    const multipart = /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
    let matchedPath = false;
    let matchedMethod = false;
    for (const c of compiled) {
      const m = c.pattern.exec(path);
      if (!m) continue;
      matchedPath = true;
      if (c.route.method !== req.method) continue;
      matchedMethod = true;
      if ((c.route.body === 'multipart') !== multipart) continue;
      void serve(c, m, url, q, req, res);
      return true;
    }
    if (!prefix && !matchedPath) return false; // at the root, other handlers may own the path
    drain(req);
    if (matchedMethod) {
      const matching = compiled.filter((c) => c.pattern.test(path) && c.route.method === req.method);
      const expected = matching.map((c) => (c.route.body === 'multipart' ? 'multipart/form-data' : 'application/json'));
      // Still the row's own error body (the universal row's `success: false`).
      send(res, new AppError('UNSUPPORTED_MEDIA_TYPE', `Send this request as ${expected.join(' or ')}.`), matching.find((c) => c.route.failure)?.route.failure);
    } else send(res, new AppError('NOT_FOUND', `No route for ${req.method} ${pathname}.`));
    return true;
  };

  async function serve(c: CompiledRoute, m: RegExpExecArray, url: string, q: number, req: IncomingMessage, res: ServerResponse) {
    nameRoute(res, c.route.root ? c.route.path : `${prefix}${c.route.path}`);
    let request: RestRequest | undefined;
    try {
      const params: Record<string, string> = {};
      c.names.forEach((name, i) => (params[name] = decodeParam(m[i + 1]!, name)));
      const { route } = c;
      // Credentials first, from the headers alone: a stranger's upload is refused while it is still arriving.
      const contextValue = await opts.context(req, { authenticate: route.access !== 'link' });
      if (route.access === 'member') requireMember(contextValue.auth);
      request = { params, query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)), body: undefined };
      if (route.body === 'stream') {
        return sendJson(res, 200, await route.run(contextValue, request, { contentType: req.headers['content-type'], contentLength: req.headers['content-length'], body: req }));
      }
      if (route.body === 'multipart') {
        Object.assign(request, await readMultipart(req, { fileLimit: opts.uploadLimitBytes }));
        // These fields reach the database without passing through GraphQL's argument guard.
        assertStorableText({ input: request.body, file: request.file?.fileName });
        return sendJson(res, 200, await route.run(contextValue, request));
      }
      request.body = await readJsonBody(req, route.carriesFile ? fileBodyLimit(opts.uploadLimitBytes, opts.bodyLimitBytes) : opts.bodyLimitBytes);
      if (route.stream && c.streamDocument && route.stream.when(request)) {
        return await stream(c, route.stream, contextValue, route.variables(request), req, res);
      }
      const result = await execute({ schema: opts.schema, document: c.document!, contextValue, variableValues: route.variables(request) });
      if (result.errors?.length) return fail(result.errors[0], req, res, c.route, request);
      sendJson(res, 200, route.result(result.data as Record<string, unknown>));
    } catch (err) {
      fail(err, req, res, c.route, request);
    }
  }

  /**
   * Runs the row's subscription and writes its events as server-sent events. Anything that
   * refuses the request (401, 402, 404, 429…) is answered as JSON before the first byte of the
   * stream; a client that leaves ends the subscription, which cancels the model call.
   */
  async function stream(
    c: CompiledRoute,
    { frames, direct }: NonNullable<OperationRoute['stream']>,
    contextValue: Context,
    variableValues: Record<string, unknown>,
    req: IncomingMessage,
    res: ServerResponse,
  ) {
    // What graphql's subscribe does, but an event `direct` can frame is not executed.
    const args = { schema: opts.schema, document: c.streamDocument!, contextValue, variableValues };
    const source = await createSourceEventStream(args);
    if (!isAsyncIterable(source)) return fail((source as ExecutionResult).errors?.[0] ?? new Error('The stream did not start.'), req, res, c.route);
    const results = mapEvents(source[Symbol.asyncIterator](), async (event): Promise<Framed> => direct?.(event) ?? (await execute({ ...args, rootValue: event })));
    const iterator = opts.drain ? opts.drain.results(results) : results;
    let clientGone = false;
    res.on('close', () => {
      clientGone = true;
      void iterator.return?.();
    });
    // The answer is being produced already; one turn of the event loop lets its model request
    // leave before this writes the stream's headers (they are not what the client waits for).
    await new Promise(setImmediate);
    if (clientGone) return;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const heartbeat = setInterval(() => res.write(HEARTBEAT), HEARTBEAT_MS);
    let framesWritten = 0;
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done || clientGone) break;
        if (Array.isArray(next.value)) {
          writeFrames(res, next.value, framesWritten++ > 0);
          await writable(res);
          continue;
        }
        if (next.value.errors?.length) {
          const { error, internal } = normalizeError(next.value.errors[0]);
          if (internal) opts.onInternalError(error.originalError ?? next.value.errors[0], req);
          res.write(encodeFrame(errorFrame(error.message)));
          break;
        }
        writeFrames(res, frames(next.value.data as Record<string, unknown>), framesWritten++ > 0);
        await writable(res); // a slow reader holds the model back; our buffer stays small
      }
    } catch (err) {
      if (!clientGone) {
        const { error, internal } = normalizeError(err);
        if (internal) opts.onInternalError(error.originalError ?? err, req);
        res.write(encodeFrame(errorFrame(error.message)));
      }
    } finally {
      clearInterval(heartbeat);
      while (res.writableCorked) res.uncork(); // what is held goes before the end
      res.end();
    }
  }

  function fail(err: unknown, req: IncomingMessage, res: ServerResponse, route?: RestRoute, request?: RestRequest) {
    const { error, internal } = normalizeError(err);
    if (internal) opts.onInternalError(error.originalError ?? err, req);
    send(res, route ? toRestError(error, { ...(request ? pathFields(route, request) : {}), ...route.fields }) : error, route?.failure);
  }
}

/** Documents are parsed and validated once, at start-up: a bad row fails the boot, not a request. */
function compile(schema: GraphQLSchema, route: RestRoute): CompiledRoute {
  const document = route.body === 'json' ? parse(route.document) : null;
  const streamDocument = route.body === 'json' && route.stream ? parse(route.stream.document) : null;
  const errors = [...(document ? validate(schema, document) : []), ...(streamDocument ? validate(schema, streamDocument) : [])];
  if (errors.length) throw new Error(`REST route ${route.method} ${route.path}: ${errors.map((e) => e.message).join('; ')}`);
  return { route, ...pathPattern(route.path), document, streamDocument };
}

/** A row's path as a pattern: each `:name` segment a group, in `names`' order; a trailing slash allowed. */
function pathPattern(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:([A-Za-z]+)/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { pattern: new RegExp(`^${source}/?$`), names };
}

/** The paths (under the base path) whose `:id` a page's preflight is checked against: the rows marked `origins`. */
export function originGuardedPaths(routes: RestRoute[]): ResourcePath[] {
  const paths = new Map<string, ResourcePath>();
  for (const route of routes) {
    if (!route.origins || route.root || paths.has(route.path)) continue;
    const { pattern, names } = pathPattern(route.path);
    if (names.length !== 1 || names[0] !== 'id') throw new Error(`REST route ${route.method} ${route.path}: \`origins\` needs the path's one parameter to be :id`);
    paths.set(route.path, { pattern, kind: route.origins });
  }
  return [...paths.values()];
}

function decodeParam(raw: string, name: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new AppError('BAD_USER_INPUT', `The path's ${name} is not correctly URL-encoded (UTF-8).`, { field: name });
  }
}

function send(res: ServerResponse, error: AppError, shape?: (body: ErrorBody) => unknown) {
  const body = errorBody(error.code, error.message, error.details);
  const wait = retryAfterOf(error);
  if (wait && !res.headersSent) res.setHeader('retry-after', String(wait));
  sendJson(res, statusOf(error.code), shape ? shape(body) : body);
}

/** An event's frames (`direct`) or the result of executing the document for it. */
type Framed = SseFrame[] | ExecutionResult;

/**
 * Writes a stream's frames. The first goes out at once; later ones are held until the event
 * loop's turn ends, so the tokens of one stream that arrive together (a model server's packet
 * carries several when we are busy) leave in one write instead of one system call each.
 */
function writeFrames(res: ServerResponse, frames: SseFrame[], hold: boolean) {
  if (hold && !res.writableCorked) {
    res.cork();
    setImmediate(() => res.writableCorked && res.uncork());
  }
  for (const frame of frames) res.write(encodeFrame(frame));
}

/** `source` with each value passed through `map`; leaving it (return) leaves the source, as graphql's subscribe does. */
function mapEvents<T, U>(source: AsyncIterator<T>, map: (value: T) => Promise<U>): AsyncIterableIterator<U> {
  const leave = async () => {
    await source.return?.();
    return { done: true as const, value: undefined as U };
  };
  const mapped: AsyncIterableIterator<U> = {
    next: async () => {
      const next = await source.next();
      if (next.done) return { done: true, value: undefined as U };
      try {
        return { done: false, value: await map(next.value) };
      } catch (err) {
        await source.return?.().catch(() => {});
        throw err;
      }
    },
    return: leave,
    throw: async (err?: unknown) => {
      await source.return?.().catch(() => {});
      throw err;
    },
    [Symbol.asyncIterator]: () => mapped,
  };
  return mapped;
}

function isAsyncIterable<T>(value: unknown): value is AsyncIterable<T> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
