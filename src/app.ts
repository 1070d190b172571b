/** The only file that knows Express, Apollo Server and graphql-sse. */
import http, { type IncomingMessage } from 'node:http';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type Request, type Response } from 'express';
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { createHandler as createSseHandler } from 'graphql-sse/lib/use/express';
import { createRestHandler, originGuardedPaths } from '../rest/handler.ts';
import { buildOpenApi } from '../rest/openapi.ts';
import { createDocsHandler } from '../rest/openapi-routes.ts';
import { routes } from '../rest/routes.ts';
import type { Config } from './config.ts';
import { pendingMigrations, type Database } from './db/orm.ts';
import { errorBody, statusOf } from './errors.ts';
import type { Context } from './graphql/context.ts';
import { budgetRules, budgetsOf, parseOptions } from './graphql/budgets.ts';
import { normalizeError } from './graphql/errors.ts';
import { buildContext } from './http/context.ts';
import { retryAfterOfErrors, withRateHeaders } from './http/rate-headers.ts';
import { createCors } from './http/cors.ts';
import { heldBy } from './http/backpressure.ts';
import { createConsoleHandler } from './http/console.ts';
import { budgetPlugin, checkStreamOperation, readGraphqlBody } from './http/graphql-guard.ts';
import { setSecurityHeaders } from './http/security-headers.ts';
import { answerClientError } from './http/client-error.ts';
import { withRequestLog } from './http/request-log.ts';
import { countOperation, createMetricsEndpoint, graphqlMetricsPlugin, withHttpMetrics } from './metrics/http.ts';
import type { Metrics } from './metrics/metrics.ts';
import { Drain } from './http/drain.ts';
import type { Logger } from './logger.ts';
import { createProtocolHandler } from './protocols/index.ts';
import type { Services } from './services.ts';

export interface App {
  server: http.Server;
  /** Starts listening; resolves with the bound port. */
  listen(port?: number, host?: string): Promise<number>;
  /** Stops accepting, drains requests. The database is closed by the caller. */
  close(): Promise<void>;
  /** SIGTERM: refuses new requests (503) while those in flight finish, for up to graceMs; see src/http/drain.ts. */
  drain(graceMs: number): Promise<void>;
}

export async function createApp(opts: {
  config: Config;
  db: Database;
  services: Services;
  schema: GraphQLSchema;
  logger: Logger;
  /** Null or absent: METRICS_ENABLED=false, nothing measured or served. */
  metrics?: Metrics | null;
}): Promise<App> {
  const { config, db, services, schema, logger } = opts;
  const metrics = opts.metrics ?? null;
  // Before CORS and the rate headers: a scrape is neither a browser's nor a client's request.
  const metricsEndpoint = metrics && config.metrics.port === null ? createMetricsEndpoint(metrics, config.metrics.token) : () => false;
  const measured = (handle: http.RequestListener) => (metrics ? withHttpMetrics(metrics, config.restBasePath, handle) : handle);
  const budgets = budgetsOf(config);
  const app = express();
  const drain = new Drain();
  const onInternalError = (error: unknown, req?: IncomingMessage) =>
    logger.error('internal error', { error, method: req?.method, path: req?.url });
  const context = (req: IncomingMessage, res?: Response, opts?: { authenticate: boolean }) => buildContext(db.orm, services, req, res, opts);
  const rest = createRestHandler({
    schema,
    routes,
    basePath: config.restBasePath,
    bodyLimitBytes: config.jsonBodyLimitBytes,
    uploadLimitBytes: config.uploadMaxBytes,
    context: (req, opts) => context(req, undefined, opts),
    onInternalError,
    drain,
  });
  const cors = createCors({ config, orm: db.orm, services, onInternalError, resourcePaths: originGuardedPaths(routes) });
  const docs = createDocsHandler({ basePath: config.restBasePath, document: buildOpenApi({ schema, routes, basePath: config.restBasePath }) });
  // /v1, /mcp and /dify: the ecosystem's protocols (src/protocols/), framework-free like REST.
  // The browser pages (src/http/console.ts): the console, and the other pages its build makes.
  const consolePages = createConsoleHandler({
    enabled: config.consoleEnabled,
    restBasePath: config.restBasePath,
    lookup: { context: (req) => context(req, undefined, { authenticate: false }) },
  });
  const protocols = createProtocolHandler({ context: (req) => context(req), bodyLimitBytes: config.jsonBodyLimitBytes, onInternalError, drain });
  // Security headers on everything; a draining process refuses new requests; then /metrics (not
  // a browser's or a client's request); CORS for every other path (preflights end there); the
  // OpenAPI document and its page, the console's pages, the protocols, then REST rows (and the upload links they hand
  // out), without the framework; everything else goes through Express.
  const serve = drain.handle((req, res) => {
    if (metricsEndpoint(req, res)) return;
    if (cors(req, res)) return;
    withRateHeaders(res, () => {
      if (!docs(req, res) && !consolePages(req, res) && !protocols(req, res) && !rest(req, res)) app(req, res);
    });
  });
  const server = http.createServer(
    withRequestLog(
      logger,
      measured((req, res) => {
        // Every response carries them, the drain's 503s and the metrics included.
        setSecurityHeaders(req, res);
        serve(req, res);
      }),
    ),
  );
  server.on('clientError', answerClientError);
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.set('etag', false);

  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', async (_req, res) => {
    try {
      const pending = await pendingMigrations(db.orm);
      if (pending > 0) return void res.status(503).json({ status: 'unavailable', reason: `${pending} migrations pending` });
      res.json({ status: 'ok' });
    } catch (err) {
      logger.warn('readiness check failed', { error: err });
      res.status(503).json({ status: 'unavailable', reason: 'database unreachable' });
    }
  });

  /** One GraphQL error as both GraphQL transports send it (Apollo at /graphql, graphql-sse at /graphql/stream). */
  const formatError = (error: unknown, formatted: GraphQLFormattedError): GraphQLFormattedError => {
    const { error: appError, internal } = normalizeError(error);
    if (internal) onInternalError(appError.originalError ?? error);
    const { details } = appError;
    return {
      message: appError.message,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: appError.code, ...(details ? { details } : {}) },
    };
  };

  // graphql-sse reads its own body: mounted before any JSON parser.
  const sseContexts = new WeakMap<object, Context & Record<PropertyKey, unknown>>();
  app.use(
    '/graphql/stream',
    createSseHandler<Context & Record<PropertyKey, unknown>>({
      schema,
      onSubscribe: async (req, params) => {
        try {
          const ctx = (await context(req.raw, req.context.res)) as Context & Record<PropertyKey, unknown>;
          sseContexts.set(req.raw, ctx);
          // The budgets of /graphql, now that the caller is known; graphql-sse validates the rest.
          const document = checkStreamOperation(schema, budgets, params, ctx.auth.kind === 'anonymous');
          return { schema, document, operationName: params.operationName, variableValues: params.variables, contextValue: ctx };
        } catch (err) {
          const { error } = normalizeError(err);
          return [JSON.stringify(errorBody(error.code, error.message, error.details)), { status: statusOf(error.code), statusText: error.code, headers: { 'content-type': 'application/json' } }];
        }
      },
      context: (req) => sseContexts.get(req.raw)!,
      onOperation: (_ctx, req, args, result) => {
        if (metrics) countOperation(metrics, args.document, args.operationName);
        // A subscription still open when a shutdown's grace is over ends with a SHUTTING_DOWN error.
        // A slow reader holds the subscription's source back (src/http/backpressure.ts).
        return Symbol.asyncIterator in result ? drain.results(heldBy(req.context.res, result[Symbol.asyncIterator]())) : undefined;
      },
      // The same error shape as /graphql: table codes, and nothing internal on the wire.
      onNext: (_ctx, _req, result) => (result.errors?.length ? { ...result, errors: result.errors.map((e) => formatError(e, e.toJSON())) as never } : undefined),
    }),
  );

  const apollo = new ApolloServer<Context>({
    schema,
    introspection: config.introspection,
    csrfPrevention: true,
    // main.ts owns SIGTERM/SIGINT and stops everything in order; Apollo's own handler would race it.
    stopOnTerminationSignals: false,
    validationRules: budgetRules(budgets),
    parseOptions: parseOptions(budgets),
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer: server }),
      // Apollo's landing page loads its sandbox from Apollo's CDN; GET /graphql from a browser is our own IDE (src/http/console.ts).
      ApolloServerPluginLandingPageDisabled(),
      ...(metrics ? [graphqlMetricsPlugin(metrics)] : []),
      budgetPlugin(budgets, { introspection: config.introspection }),
      {
        // A refused operation answers 200 with its error (GraphQL's way); the wait goes in the header too.
        requestDidStart: async () => ({
          willSendResponse: async ({ response }) => {
            const wait = response.body.kind === 'single' ? retryAfterOfErrors(response.body.singleResult.errors) : null;
            if (wait) response.http.headers.set('retry-after', String(wait));
          },
        }),
      },
    ],
    includeStacktraceInErrorResponses: false,
    formatError: (formatted, error) => formatError(error, formatted),
  });
  await apollo.start();

  app.use(
    '/graphql',
    async (req: Request, res: Response, next: express.NextFunction) => {
      try {
        // The JSON limit of REST, but for the one operation that carries a base64 file.
        req.body = await readGraphqlBody(req, config, budgets);
        next();
      } catch (err) {
        // The same table, in the GraphQL response shape.
        const { error, internal } = normalizeError(err);
        if (internal) return next(err);
        res.status(statusOf(error.code)).json({ errors: [{ message: error.message, extensions: { code: error.code } }] });
      }
    },
    expressMiddleware(apollo, {
      context: async ({ req, res }) => {
        try {
          return await context(req, res);
        } catch (err) {
          const { error } = normalizeError(err);
          // Apollo answers a context failure with extensions.http.status.
          throw new GraphQLError(error.message, { extensions: { code: error.code, http: { status: statusOf(error.code) } } });
        }
      },
    }),
  );

  app.use((req, res) => {
    res.status(404).json(errorBody('NOT_FOUND', `No route for ${req.method} ${req.path}.`));
  });
  app.use((err: unknown, req: Request, res: Response, _next: express.NextFunction) => {
    const status = (err as { status?: number } | null)?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // Errors raised by Express itself for a bad request (e.g. a malformed URL).
      const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 404 ? 'NOT_FOUND' : 'BAD_USER_INPUT';
      return void res.status(statusOf(code)).json(errorBody(code, (err as Error).message || 'Bad request.'));
    }
    const { error, internal } = normalizeError(err);
    if (internal) onInternalError(error.originalError ?? err, req);
    res.status(statusOf(error.code)).json(errorBody(error.code, error.message, error.details));
  });

  return {
    server,
    listen: (port = config.port, host = config.host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        // A burst of new connections (a page's visitors all at once) waits in the kernel's accept
        // queue while the event loop is busy; past Node's default of 511 the kernel drops them and
        // clients retry after 1, 3, 7… s. The kernel caps it at net.core.somaxconn.
        server.listen({ port, host, backlog: 4096 }, () => {
          server.off('error', reject);
          resolve((server.address() as { port: number }).port);
        });
      }),
    drain: (graceMs) => drain.drain(graceMs, () => server.closeAllConnections()),
    close: async () => {
      await apollo.stop(); // drains the HTTP server
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
