import { NotFoundError } from '@mikro-orm/core';
import { GraphQLError } from 'graphql';
import { ArgumentValidationError, AuthorizationError, AuthenticationError } from 'type-graphql';
import { AppError, isErrorCode, type ErrorDetails } from '../errors.ts';
import { currentRequestId } from '../logger.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';

/** Codes GraphQL machinery raises for a request the client got wrong. */
const CLIENT_CODES = new Set([
  'BAD_USER_INPUT',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'PERSISTED_QUERY_NOT_FOUND',
]);

/**
 * Turns whatever a GraphQL execution produced into an AppError of the table. Both transports
 * call this, so they agree on every code. Returns `internal: true` for what must be logged.
 */
export function normalizeError(error: unknown): { error: AppError; internal: boolean } {
  if (error instanceof AppError) return { error, internal: false }; // its originalError is only a cause
  const gqlError = error instanceof GraphQLError ? error : null;
  const original = gqlError?.originalError ?? error;

  if (original instanceof AppError) return { error: original, internal: false };
  if (original instanceof ArgumentValidationError) {
    const fields: Record<string, string> = {};
    for (const v of original.extensions.validationErrors ?? []) {
      fields[String(v.property)] = Object.values(v.constraints ?? {}).join('; ') || 'is not valid';
    }
    const names = Object.keys(fields);
    const message = names.length ? names.map((f) => fields[f]).join('; ') : 'The input is not valid.';
    return { error: new AppError('BAD_USER_INPUT', message, { field: names[0], fields }), internal: false };
  }
  if (original instanceof AuthenticationError) {
    return { error: new AppError('UNAUTHENTICATED', 'Missing or invalid credentials.'), internal: false };
  }
  if (original instanceof AuthorizationError) return { error: new AppError('FORBIDDEN'), internal: false };
  // findOneOrFail's miss: the ORM's message names the entity and the query, which stay inside.
  if (original instanceof NotFoundError) return { error: new AppError('NOT_FOUND'), internal: false };

  // Request-level errors (parse, validation, variable coercion) carry no path: the client's doing.
  const requestLevel = gqlError && !gqlError.path && (!gqlError.originalError || gqlError.originalError instanceof GraphQLError);
  if (gqlError && requestLevel) {
    const code = gqlError.extensions?.code;
    if (code === undefined || (typeof code === 'string' && CLIENT_CODES.has(code))) {
      // The error itself is kept as the cause: its own cause is coercion's message alone, which
      // REST reads to name the field (rest/fields.ts) without guessing where the client's value ends.
      return { error: new AppError('BAD_USER_INPUT', gqlError.message, fieldDetails(gqlError.message), gqlError), internal: false };
    }
    if (isErrorCode(code) && code !== 'INTERNAL') return { error: new AppError(code, gqlError.message), internal: false };
  }
  if (isDatabaseUnavailable(original)) return { error: new AppError('SERVICE_UNAVAILABLE', undefined, undefined, original), internal: false };
  // The id a user quotes to an operator, who finds the logged cause by it: on every transport.
  const requestId = currentRequestId();
  return { error: new AppError('INTERNAL', undefined, requestId ? { requestId } : undefined, original), internal: true };
}

/**
 * The end of graphql-js's message for a field its input type does not have: `…; Field "<the name as
 * sent>" is not defined by type "AgentCreateInput".`, maybe with ` Did you mean "name"?`. The type
 * and the suggestions are GraphQL names; the field's name may hold anything, quotes included.
 */
const UNKNOWN_FIELD_END = /" is not defined by type "[_A-Za-z][_0-9A-Za-z]*"\.(?: Did you mean [ "_A-Za-z0-9,]*\?)?$/;

/** The unknown field's name, read back from the end of the message (in linear time: the message quotes the client's value). */
function unknownField(message: string): string | undefined {
  const end = UNKNOWN_FIELD_END.exec(message)?.index;
  if (end === undefined) return undefined;
  const start = message.lastIndexOf('; Field "', end);
  return start < 0 ? undefined : message.slice(start + '; Field "'.length, end);
}

/** `Variable "$input" got invalid value … at "input.temperature"` -> { field: 'temperature' }. */
function fieldDetails(message: string): ErrorDetails | undefined {
  const at = /at "[^".]+\.([^"]+)"/.exec(message);
  if (at) return { field: at[1] };
  // graphql-js quotes an unknown field's name as it was sent, quotes and all: read it back from the
  // end of the message (the type's name is a GraphQL name; a suggestion may follow).
  const unknown = unknownField(message);
  if (unknown !== undefined) return { field: unknown };
  const field = /Field "([^"]+)"/.exec(message);
  if (field) return { field: field[1] };
  const variable = /Variable "\$([^"]+)"/.exec(message);
  if (variable) return { field: variable[1] };
  return undefined;
}
