import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { execute, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { AppError, errorBody, statusOf } from '../src/errors.ts';
import type { Context } from '../src/graphql/context.ts';
import { normalizeError } from '../src/graphql/errors.ts';
import type { RestRoute } from './routes.ts';

export interface RestAdapterOptions {
  schema: GraphQLSchema;
  routes: RestRoute[];
  /** Builds the same per-request context GraphQL uses. Throws UNAUTHENTICATED. */
  context: (req: Request, res: Response) => Promise<Context>;
  onInternalError: (error: unknown, req: Request) => void;
}

/** Mounts each route as a GraphQL execution against the shared schema. */
export function createRestRouter({ schema, routes, context, onInternalError }: RestAdapterOptions): Router {
  const router = express.Router();
  for (const route of routes) {
    const document = compile(schema, route);
    router[route.method](route.path, async (req: Request, res: Response) => {
      try {
        const contextValue = await context(req, res);
        const result = await execute({ schema, document, contextValue, variableValues: route.variables(req) });
        if (result.errors?.length) return sendError(res, req, result.errors[0], onInternalError);
        res.status(200).json(route.result(result.data as Record<string, unknown>));
      } catch (err) {
        sendError(res, req, err, onInternalError);
      }
    });
  }
  return router;
}

/** Documents are parsed and validated once, at start-up: a bad row fails the boot, not a request. */
function compile(schema: GraphQLSchema, route: RestRoute): DocumentNode {
  const document = parse(route.document);
  const errors = validate(schema, document);
  if (errors.length) {
    throw new Error(`REST route ${route.method.toUpperCase()} ${route.path}: ${errors.map((e) => e.message).join('; ')}`);
  }
  return document;
}

export function sendError(res: Response, req: Request, err: unknown, onInternalError: (e: unknown, r: Request) => void) {
  const { error, internal } = normalizeError(err);
  if (internal) onInternalError(error.originalError ?? err, req);
  sendAppError(res, error);
}

export function sendAppError(res: Response, error: AppError) {
  if (res.headersSent) return void res.end();
  res.status(statusOf(error.code)).json(errorBody(error.code, error.message, error.details));
}

/** express.json failures (bad JSON, too large, wrong charset) as table errors. */
export function bodyParserError(err: unknown): AppError | null {
  const type = (err as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') return new AppError('BAD_USER_INPUT', 'The request body is not valid JSON.');
  if (type === 'entity.too.large') return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
  if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported; send UTF-8 JSON.');
  }
  return null;
}

export function bodyParserErrors(err: unknown, _req: Request, res: Response, next: NextFunction) {
  const error = bodyParserError(err);
  if (error) return sendAppError(res, error);
  next(err);
}
