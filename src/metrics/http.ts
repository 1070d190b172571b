/**
 * The HTTP side of the metrics: request durations by route template, open streams, GraphQL
 * operations by root field, and `GET /metrics` itself (on the main port, or on METRICS_PORT).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { getOperationAST, Kind, type DocumentNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { ApolloServerPlugin } from '@apollo/server';
import { errorBody } from '../errors.ts';
import { DIFY_PREFIX } from '../protocols/dify/handler.ts';
import { MCP_PATH } from '../protocols/mcp/handler.ts';
import { OPENAI_PREFIX } from '../protocols/openai/handler.ts';
import type { Metrics } from './metrics.ts';
import { pathnameOf } from '../http/respond.ts';

export const METRICS_PATH = '/metrics';

const named = new WeakMap<ServerResponse, string>();

/** The handler that took the request names its route template (a REST row's path, say). */
export function nameRoute(res: ServerResponse, route: string): void {
  named.set(res, route);
}

/**
 * Routes that no handler names because they are fixed paths (Express's, the protocols', the
 * OpenAPI page). Anything else that nobody named is `unmatched`: a raw path would let any
 * client create a series per URL.
 */
function fixedRoutes(basePath: string): (pathname: string) => string | null {
  const exact = new Set([
    '/healthz',
    '/readyz',
    METRICS_PATH,
    '/graphql',
    '/graphql/stream',
    `${OPENAI_PREFIX}/models`,
    `${OPENAI_PREFIX}/chat/completions`,
    MCP_PATH,
    `${DIFY_PREFIX}/retrieval`,
    `${basePath}/openapi.json`,
    `${basePath}/docs`,
  ]);
  const patterns: [RegExp, string][] = [
    [new RegExp(`^${OPENAI_PREFIX}/models/[^/]+$`), `${OPENAI_PREFIX}/models/:id`],
    [new RegExp(`^${basePath}/docs/[^/]+$`), `${basePath}/docs/:file`],
  ];
  return (pathname) => {
    const path = pathname.length > 1 ? pathname.replace(/\/$/, '') : pathname;
    if (exact.has(path)) return path;
    for (const [pattern, route] of patterns) if (pattern.test(path)) return route;
    return null;
  };
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const isEventStream = (type: unknown) => typeof type === 'string' && /^text\/event-stream\b/i.test(type);

/**
 * Wraps a node:http listener: times each request until its response closes, under the route
 * its handler named, and counts the responses that are event streams while they are open.
 * Every stream this service writes (REST answers, graphql-sse, /v1, MCP) is an HTTP response
 * with `text/event-stream`: counting there catches them all, including any added later.
 */
export function withHttpMetrics(metrics: Metrics, basePath: string, handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const fixed = fixedRoutes(basePath);
  return (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    // Read now: Express rewrites req.url under a mount point (/graphql/stream) while it serves.
    const fixedRoute = fixed(pathnameOf(req.url)) ?? 'unmatched';
    const routeOf = () => named.get(res) ?? fixedRoute;
    let streamRoute: string | null = null;
    // node:http writes every response's head through writeHead (an implicit head too), so this is
    // the one moment the content type is known and nothing has been sent yet.
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      const result = writeHead.apply(this, args);
      const headers = args.find((a) => typeof a === 'object' && a !== null) as Record<string, unknown> | undefined;
      if (streamRoute === null && (isEventStream(res.getHeader('content-type')) || isEventStream(headers?.['content-type'] ?? headers?.['Content-Type']))) {
        streamRoute = routeOf();
        metrics.openStreams.inc({ route: streamRoute });
      }
      return result;
    } as ServerResponse['writeHead'];
    res.once('close', () => {
      if (streamRoute !== null) metrics.openStreams.dec({ route: streamRoute });
      const method = METHODS.has(req.method ?? '') ? req.method! : 'other';
      const status = res.headersSent ? String(res.statusCode) : 'aborted';
      metrics.httpDuration.observe({ route: routeOf(), method, status }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    handle(req, res);
  };
}

/** The root fields an operation selects (through fragments too): names from the schema, so a bounded set. */
export function rootFields(operation: OperationDefinitionNode, document: DocumentNode): string[] {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const fields = new Set<string>();
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) fields.add(s.name.value);
      else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = fragments.get(s.name.value);
        if (fragment) walk(fragment.selectionSet);
      }
    }
  };
  walk(operation.selectionSet);
  return [...fields];
}

/** Counts a validated operation once per root field (not by the client's operationName, which is anything it likes). */
export function countOperation(metrics: Metrics, document: DocumentNode, operationName?: string | null): void {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return;
  for (const field of rootFields(operation, document)) metrics.graphqlOperations.inc({ type: operation.operation, field });
}

/** The Apollo Server side (/graphql): counted once the operation is parsed and validated against the schema. */
export function graphqlMetricsPlugin(metrics: Metrics): ApolloServerPlugin {
  return {
    requestDidStart: async () => ({
      didResolveOperation: async ({ document, operation }) => {
        if (operation) for (const field of rootFields(operation, document)) metrics.graphqlOperations.inc({ type: operation.operation, field });
      },
    }),
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * `GET /metrics`. With a token, the request must carry it as a bearer token; it is compared in
 * constant time (over digests, so not even its length leaks). Returns false for other paths.
 */
export function createMetricsEndpoint(metrics: Metrics, token: string | null): (req: IncomingMessage, res: ServerResponse) => boolean {
  const expected = token ? digest(token) : null;
  return (req, res) => {
    if (pathnameOf(req.url) !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    req.resume();
    if (expected) {
      const given = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
      if (!given || !timingSafeEqual(digest(given), expected)) {
        const body = JSON.stringify(errorBody('UNAUTHENTICATED', 'The metrics need the bearer token set in METRICS_TOKEN.'));
        res.writeHead(401, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'www-authenticate': 'Bearer realm="metrics"' });
        return void res.end(body), true;
      }
    }
    metrics.scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (error: unknown) => {
        metrics.logger?.error('metrics scrape failed', { error });
        const body = JSON.stringify(errorBody('INTERNAL', 'The metrics could not be collected.'));
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
    );
    return true;
  };
}

/** METRICS_PORT: /metrics alone on a port of its own (e.g. reachable only from the monitoring network). */
export async function startMetricsServer(metrics: Metrics, opts: { port: number; host: string; token: string | null }): Promise<{ port: number; close(): Promise<void> }> {
  const endpoint = createMetricsEndpoint(metrics, opts.token);
  const server = http.createServer((req, res) => {
    if (endpoint(req, res)) return;
    req.resume();
    const body = JSON.stringify(errorBody('NOT_FOUND', `This port serves only GET ${METRICS_PATH}.`));
    res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
