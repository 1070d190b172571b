/**
 * The request budgets of src/graphql/budgets.ts, where each GraphQL transport can apply them:
 *
 * - /graphql (Apollo): the budget rules join the validation rules; the anonymous model-call
 *   check is a plugin step after the operation is resolved, when the context (built before
 *   parsing, with the caller) is known; the body is read with a limit chosen per operation.
 * - /graphql/stream (graphql-sse): `checkStreamOperation` parses, checks the same rules and the
 *   caller in `onSubscribe`, before anything runs.
 */
import type { IncomingMessage } from 'node:http';
import type { ApolloServerPlugin } from '@apollo/server';
import { blockFieldSuggestionsDefaultOptions } from '@escape.tech/graphql-armor-block-field-suggestions';
import { getOperationAST, GraphQLError, Kind, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { AppError } from '../errors.ts';
import { budgetRules, checkAnonymousCalls, parseWithin, tokenMessage, type Budgets } from '../graphql/budgets.ts';
import type { Context } from '../graphql/context.ts';
import { fileBodyLimit, readJsonBody } from './body.ts';

/** The one mutation whose body carries a base64 file (UniversalInput.fileBuffer). */
export const FILE_OPERATION_FIELD = 'universalProcess';

/**
 * Apollo's side: refuses an anonymous operation over its model calls (400, BAD_USER_INPUT), words
 * the token refusal like the others, with introspection off hides graphql-js's "Did you mean …?"
 * field suggestions (they would spell the schema out), and answers 429 for an operation refused
 * whole by a rate limit.
 */
export function budgetPlugin(budgets: Budgets, opts: { introspection: boolean }): ApolloServerPlugin<Context> {
  return {
    requestDidStart: async () => ({
      didResolveOperation: async ({ contextValue, document, operation }) => {
        if (!operation || contextValue.auth.kind !== 'anonymous') return;
        try {
          checkAnonymousCalls(budgets, document, operation);
        } catch (err) {
          // Apollo answers a GraphQLError thrown here with the status it names (500 otherwise).
          throw new GraphQLError((err as Error).message, { originalError: err as Error, extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
        }
      },
      didEncounterErrors: async ({ errors }) => {
        for (const error of errors) {
          const tokens = tokenMessage(budgets, error.message);
          if (tokens) (error as { message: string }).message = tokens;
          if (!opts.introspection) (error as { message: string }).message = error.message.replace(/Did you mean .+\?/g, blockFieldSuggestionsDefaultOptions.mask);
        }
      },
      willSendResponse: async ({ response }) => {
        // Nothing ran and a rate limit is why (a sign-in throttled): 429, as REST says it.
        if (response.body.kind !== 'single') return;
        const { data, errors } = response.body.singleResult;
        if (data == null && errors?.length && errors.every((e) => e.extensions?.code === 'RATE_LIMITED')) response.http.status = 429;
      },
    }),
  };
}

/**
 * graphql-sse's side, in `onSubscribe` once the caller is known: the document parsed within the
 * token budget and checked against the budget rules and the anonymous model-call limit (the
 * standard rules follow in graphql-sse). Throws BAD_USER_INPUT.
 */
export function checkStreamOperation(schema: GraphQLSchema, budgets: Budgets, params: { query: string; operationName?: string | null }, anonymous: boolean): DocumentNode {
  const document = parseWithin(budgets, params.query);
  const [error] = validate(schema, document, budgetRules(budgets));
  if (error) throw error.originalError instanceof AppError ? error.originalError : new AppError('BAD_USER_INPUT', error.message);
  const operation = getOperationAST(document, params.operationName);
  if (operation && anonymous) checkAnonymousCalls(budgets, document, operation);
  return document;
}

/**
 * Reads a /graphql body: JSON_BODY_LIMIT_BYTES for every operation but the one that carries a file,
 * which may send a base64 file of UPLOAD_MAX_BYTES besides. The body is read once: a body that
 * declares a Content-Length between the two limits is read up to the large one (node stops a body
 * at its declared length), then refused with 413 before anything runs unless its operation is the
 * file one; a body without a Content-Length (chunked) is held to the small limit.
 * Throws PAYLOAD_TOO_LARGE, BAD_USER_INPUT, UNSUPPORTED_MEDIA_TYPE.
 */
export async function readGraphqlBody(req: IncomingMessage, limits: { jsonBodyLimitBytes: number; uploadMaxBytes: number }, budgets: Budgets): Promise<unknown> {
  const small = limits.jsonBodyLimitBytes;
  const large = fileBodyLimit(limits.uploadMaxBytes, small);
  const declared = Number(req.headers['content-length']);
  if (!(declared > small)) return readJsonBody(req, small);
  const body = await readJsonBody(req, large);
  if (!carriesFile(body, budgets)) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `The request body is larger than ${small} bytes; only ${FILE_OPERATION_FIELD}, which carries a file, may send more (up to ${large}).`,
      { limit: small },
    );
  }
  return body;
}

/** Whether a parsed body's operation is a mutation of the file field alone. */
function carriesFile(body: unknown, budgets: Budgets): boolean {
  const { query, operationName } = (body ?? {}) as { query?: unknown; operationName?: unknown };
  if (typeof query !== 'string') return false;
  let operation;
  try {
    operation = getOperationAST(parseWithin(budgets, query), typeof operationName === 'string' ? operationName : undefined);
  } catch {
    return false; // not a file upload, whatever else is wrong with it
  }
  if (operation?.operation !== 'mutation') return false;
  const fields = operation.selectionSet.selections;
  return fields.length > 0 && fields.every((s) => s.kind === Kind.FIELD && s.name.value === FILE_OPERATION_FIELD);
}
