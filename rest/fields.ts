/**
 * REST errors speak REST. A row runs a GraphQL operation, so a bad input comes back in GraphQL's
 * words (`Variable "$input" got invalid value {}; Field "query" of required type "String!" was
 * not provided`, `first`, `after`). This renames the field after the REST request it came
 * from (`query is required.`, `limit`, `cursor`) using the row's map of variable paths to REST
 * names, and drops GraphQL type names. The resolvers are not touched: GraphQL keeps its words.
 */
import { AppError } from '../src/errors.ts';

/**
 * GraphQL variable path -> REST name. `input` (the body) maps to the body's root by default,
 * so `input.topK` is `topK`; a row adds its own (`first` -> `limit`, `input.customId` -> `custom_id`).
 */
export type FieldNames = Record<string, string>;

const DEFAULT_NAMES: FieldNames = { input: '' };

/**
 * Variables that carry a path parameter under another name (`agentId` <- `:id`), so an error
 * about the variable names the parameter the client wrote.
 */
export function pathFields(route: { body: string; variables?: (req: never) => Record<string, unknown> }, request: { params: Record<string, string> }): FieldNames {
  if (route.body !== 'json' || !route.variables || !Object.keys(request.params).length) return {};
  let variables: Record<string, unknown>;
  try {
    variables = route.variables(request as never);
  } catch {
    return {};
  }
  const names: FieldNames = {};
  for (const [param, value] of Object.entries(request.params)) {
    for (const [variable, given] of Object.entries(variables)) if (given === value && variable !== param) names[variable] = param;
  }
  return names;
}

/** The REST name of a GraphQL path (`input.filters.custom_ids[0]` -> `filters.custom_ids[0]`). */
export function restField(path: string, names: FieldNames = {}): string {
  const all = { ...DEFAULT_NAMES, ...names };
  let best: string | null = null;
  for (const prefix of Object.keys(all)) {
    if ((path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`)) && (best === null || prefix.length > best.length)) best = prefix;
  }
  if (best === null) return path;
  const rest = path.slice(best.length).replace(/^\./, '');
  const head = all[best]!;
  return head && rest ? `${head}${rest.startsWith('[') ? '' : '.'}${rest}` : head || rest;
}

/** Why a value was refused, in words that name no GraphQL type. */
function reason(text: string): string {
  if (/was not provided|not to be null|must not be null/.test(text)) return 'is required.';
  if (/^Int cannot represent non 32-bit/.test(text)) return 'is out of range.';
  if (/^Int cannot represent/.test(text)) return 'must be a whole number.';
  if (/^Float cannot represent/.test(text)) return 'must be a number.';
  if (/^(String|ID) cannot represent/.test(text)) return 'must be a string.';
  if (/^Boolean cannot represent/.test(text)) return 'must be true or false.';
  if (/does not exist in ".*" enum|Enum ".*" cannot represent/.test(text)) return 'is not one of the accepted values.';
  if (/to be an object/.test(text)) return 'must be a JSON object.';
  return 'is not valid.';
}

/**
 * The parts of graphql-js's coercion message: `Variable "$v" got invalid value <value>[ at "<path>"]; <detail>`
 * or `Variable "$v" of required type "T" was not provided.` The printed value is the client's and
 * may hold anything (`; `, ` at "`, quotes in its keys), so it is not parsed: the detail is the
 * coercion's own error (the cause normalizeError keeps) and the path is read from the end.
 */
function parseCoercion(error: AppError): { variable: string; at?: string; detail?: string } | null {
  const message = error.message;
  const head = /^Variable "\$(\w+)" /.exec(message);
  if (!head) return null;
  const variable = head[1]!;
  const rest = message.slice(head[0].length);
  if (/^of (?:required|non-null) type "[^"]+" (?:was not provided|must not be null)\.?$/.test(rest)) return { variable };
  const cause = (error.originalError as { originalError?: unknown } | undefined)?.originalError;
  const detail = cause instanceof Error ? cause.message : undefined;
  if (detail === undefined || !rest.startsWith('got invalid value ') || !rest.endsWith(`; ${detail}`)) return null;
  const prefix = rest.slice(0, rest.length - detail.length - 2);
  // Only names and list indexes can follow the variable in the path (the schema's field names).
  const at = new RegExp(` at "(${variable}(?:\\.[_A-Za-z][_0-9A-Za-z]*|\\[\\d+\\])*)"$`).exec(prefix)?.[1];
  return { variable, at, detail };
}

/**
 * The same error with the REST field name in `details.field` and in the message. Only
 * BAD_USER_INPUT carries field names; every other error passes through untouched.
 */
export function toRestError(error: AppError, names: FieldNames = {}): AppError {
  if (error.code !== 'BAD_USER_INPUT') return error;
  const coercion = parseCoercion(error);
  if (coercion) {
    const { variable, at, detail } = coercion;
    const path = at ?? variable;
    // A field name sent by the client may hold quotes (or be empty): the name runs to the last `" is not defined`.
    const key = detail ? /^Field "(.*)" (?:of required type "[^"]+" was not provided|is not defined by type "[^"]+")/s.exec(detail)?.[1] : undefined;
    // An empty field name is shown as `""`, not as nothing (which would blame the body).
    const field = key === undefined ? restField(path, names) : key === '' ? [restField(path, names), '""'].filter(Boolean).join('.') : restField(`${path}.${key}`, names);
    if (!field) return new AppError('BAD_USER_INPUT', 'The request body must be a JSON object.', { field: 'body' });
    const why = detail && /is not defined by type/.test(detail) ? 'is not a known field.' : reason(detail ?? 'was not provided');
    return new AppError('BAD_USER_INPUT', `${field} ${why}`, { field });
  }
  const field = error.details?.field;
  if (typeof field !== 'string') return error;
  // Resolver and validation errors name a variable (`first`) or a field of the input (`customId`).
  const known = { ...DEFAULT_NAMES, ...names };
  const rest = Object.hasOwn(known, field) ? restField(field, names) : restField(`input.${field}`, names);
  if (rest === field) return error;
  const message = error.message.replace(new RegExp(`\\b${field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'g'), rest);
  const fields = error.details?.fields as Record<string, unknown> | undefined;
  const renamed = fields ? Object.fromEntries(Object.entries(fields).map(([k, v]) => [restField(Object.hasOwn(known, k) ? k : `input.${k}`, names), v])) : undefined;
  return new AppError('BAD_USER_INPUT', message, { ...error.details, field: rest, ...(renamed ? { fields: renamed } : {}) });
}
