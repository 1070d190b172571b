/**
 * The OpenAPI 3.1 description of the REST layer, generated from the route table: each row's
 * `doc` says what only a person can (summary, description, the codes its service may answer);
 * parameters, bodies, responses, security, statuses and the error body are read off the row,
 * the GraphQL schema it runs against and the error table. A row cannot be served undescribed.
 */
import type { GraphQLSchema } from 'graphql';
import { ERROR_CODES, errorBody, type ErrorCode } from '../src/errors.ts';
import { createSchemaTools, type JsonSchema } from './json-schema.ts';
import type { RestRoute } from './routes.ts';
import { DONE, encodeFrame, errorFrame, HEARTBEAT } from './sse.ts';

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
}

/** The interface's version (interface.md, "Versioning"). */
const INTERFACE_VERSION = '1.0.0';

const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

export const RATE_LIMIT_HEADERS: Record<string, string> = {
  'RateLimit-Limit': 'Requests allowed in the current window (of the limit closest to exhaustion).',
  'RateLimit-Remaining': 'Requests left in the current window.',
  'RateLimit-Reset': 'Seconds until the window resets.',
};

/** Statuses every row of this access and body can answer, whatever its service does. */
function derivedCodes(route: RestRoute): ErrorCode[] {
  // A link that is not valid (or no longer) is 403; on other rows, scoped keys and allowed origins answer 403.
  const codes: ErrorCode[] = ['BAD_USER_INPUT', 'FORBIDDEN', 'NOT_FOUND', 'INTERNAL', 'SERVICE_UNAVAILABLE'];
  // An invalid token is 401 on public rows too.
  if (route.access !== 'link') codes.push('UNAUTHENTICATED');
  if (BODY_METHODS.has(route.method)) codes.push('PAYLOAD_TOO_LARGE');
  if (BODY_METHODS.has(route.method) && route.body !== 'stream') codes.push('UNSUPPORTED_MEDIA_TYPE');
  return codes;
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z]+)/g, '{$1}');
const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);
const tagOf = (path: string) => path.split('/').filter((s) => s && s !== 'external')[0] ?? 'service';

function operationName(route: RestRoute): string {
  const named = route.body === 'json' ? /^\s*(?:query|mutation|subscription)\s+(\w+)/.exec(route.document)?.[1] : undefined;
  const words = named ? [named] : route.doc.summary.replace(/[^A-Za-z0-9 ]/g, ' ').split(/\s+/).filter((w) => w && !/^(a|an|the)$/i.test(w));
  const camel = words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
  return camel[0]!.toLowerCase() + camel.slice(1);
}

/** The body a row's `failure` makes of the table's error body, as a schema (its constant fields kept). */
function failureSchema(failure: (body: ReturnType<typeof errorBody>) => unknown): JsonSchema {
  const probe = errorBody('INTERNAL', '');
  const shaped = failure(probe) as Record<string, unknown>;
  const properties = Object.fromEntries(
    Object.entries(shaped).map(([key, value]) => [key, value === probe.error ? { $ref: '#/components/schemas/ErrorObject' } : { const: value }]),
  );
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

function sseDescription(events: Record<string, string>): string {
  const lines = Object.entries(events).map(([name, what]) => `- \`event: ${name}\`: ${what}`);
  return [
    'Server-sent events:',
    ...lines,
    `- an unnamed \`data: ${DONE.data}\` frame ends the stream;`,
    `- \`data: ${errorFrame('').data}<message>\` reports an error, then the stream ends;`,
    `- \`${HEARTBEAT.trim()}\` comments keep idle proxies from closing the connection.`,
  ].join('\n');
}

export function buildOpenApi(opts: { schema: GraphQLSchema; routes: RestRoute[]; basePath: string; title?: string }): OpenApiDocument {
  const t = createSchemaTools(opts.schema);
  const paths: Record<string, Record<string, unknown>> = {};
  const usedIds = new Set<string>();

  for (const route of opts.routes) {
    const { doc } = route;
    // The type requires it; rows built at run time (or cast) are held to it here.
    if (!doc?.summary?.trim()) throw new Error(`REST route ${route.method} ${route.path} has no description (doc.summary in rest/routes.ts).`);
    const key = openApiPath(route.path);
    const method = route.method.toLowerCase();
    const variables = route.body === 'json' ? t.variables(route.document) : new Map();
    const params = pathParams(route.path);

    const parameters: Record<string, unknown>[] = params.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
      ...(doc.params?.[name] ? { description: doc.params[name] } : {}),
    }));
    if (route.method === 'GET') {
      // A GET row's variables that are not path parameters come from the query string, under their REST names.
      for (const [name, type] of variables) {
        if (params.includes(name)) continue;
        const restName = route.fields?.[name] ?? name;
        const schema = t.variable(type, name);
        parameters.push({ name: restName, in: 'query', required: false, schema: { ...schema, type: Array.isArray(schema.type) ? schema.type[0] : schema.type } });
      }
    }

    let requestBody: Record<string, unknown> | undefined;
    if (route.body === 'json' && BODY_METHODS.has(route.method)) {
      const input = variables.get('input');
      const schema = doc.body?.(t) ?? (input ? t.variable(input, 'input', route.fields) : undefined);
      if (schema) requestBody = { required: Boolean(input), content: { 'application/json': { schema } } };
    } else if (route.body === 'multipart') {
      if (!doc.body) throw new Error(`REST route ${route.method} ${route.path}: a multipart row describes its body (doc.body).`);
      requestBody = { required: true, content: { 'multipart/form-data': { schema: doc.body(t) } } };
    } else if (route.body === 'stream') {
      requestBody = { required: true, content: { 'application/octet-stream': { schema: doc.body?.(t) ?? { type: 'string' } } } };
    }

    const limited = doc.errors?.includes('RATE_LIMITED') ?? false;
    const rateHeaders = limited ? Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }])) : undefined;

    const ok = doc.response?.(t) ?? (route.body === 'json' ? t.operationResult(route.document) : undefined);
    if (!ok) throw new Error(`REST route ${route.method} ${route.path}: a row without a GraphQL document describes its response (doc.response).`);
    const okContent: Record<string, unknown> = { 'application/json': { schema: ok } };
    if (route.body === 'json' && route.stream) {
      if (!doc.events) throw new Error(`REST route ${route.method} ${route.path}: a streamed row names its events (doc.events).`);
      const example = [...Object.keys(doc.events).map((event) => encodeFrame({ event, data: '…' })), encodeFrame(DONE)].join('');
      okContent['text/event-stream'] = {
        schema: { type: 'string', description: sseDescription(doc.events) },
        example,
        // The same, for machines: the event names a client must handle.
        'x-sse-events': Object.keys(doc.events),
      };
    }
    const responses: Record<string, unknown> = {
      200: {
        description: route.body === 'json' && route.stream ? 'The result; with `streaming: true`, server-sent events (`text/event-stream`).' : 'The result.',
        ...(rateHeaders ? { headers: rateHeaders } : {}),
        content: okContent,
      },
    };

    const codes = [...new Set([...derivedCodes(route), ...(doc.errors ?? [])])];
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of codes) byStatus.set(ERROR_CODES[code].status, [...(byStatus.get(ERROR_CODES[code].status) ?? []), code]);
    for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
      const schema = route.failure ? failureSchema(route.failure) : { $ref: '#/components/schemas/Error' };
      const example = route.failure ? route.failure(errorBody(list[0]!, ERROR_CODES[list[0]!].message)) : errorBody(list[0]!, ERROR_CODES[list[0]!].message);
      responses[status] = {
        description: list.map((code) => `\`${code}\`: ${ERROR_CODES[code].message}`).join(' '),
        ...(status === 429 ? { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' }, ...rateHeaders } } : {}),
        content: { 'application/json': { schema, example } },
      };
    }

    const security =
      route.access === 'link' ? [] : route.access === 'member' ? [{ bearer: [] }, { session: [] }] : [{ bearer: [] }, { session: [] }, {}];

    let operationId = operationName(route);
    for (let n = 2; usedIds.has(operationId); n++) operationId = `${operationName(route)}${n}`;

    const operation: Record<string, unknown> = {
      operationId,
      summary: doc.summary,
      ...(doc.description ? { description: doc.description } : {}),
      tags: [tagOf(route.path)],
      'x-interface-endpoint': [route.endpoint],
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
      security,
    };

    const item = (paths[key] ??= {});
    // Upload links are served at the root, not under the base path of the document's server.
    if (route.root && opts.basePath) item.servers = [{ url: '/' }];
    const existing = item[method] as Record<string, unknown> | undefined;
    if (existing) mergeInto(existing, operation);
    else {
      usedIds.add(operationId);
      item[method] = operation;
    }
  }

  return {
    openapi: '3.1.0',
    info: {
      title: opts.title ?? 'agentbase REST API',
      version: INTERFACE_VERSION,
      description:
        'The documented REST paths of the service. Each runs one operation of the GraphQL API (`/graphql`), so both share every rule, validation and error. Errors are `{"error": {"code", "message", "details"?}}` with the status of their code.',
    },
    servers: [{ url: opts.basePath || '/' }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key (`ak_…`) or a session token (`st_…`).' },
        session: { type: 'apiKey', in: 'cookie', name: 'ab_session', description: 'The session cookie `signUp` and `login` set (browsers).' },
      },
      schemas: {
        ErrorObject: {
          type: 'object',
          properties: {
            code: { type: 'string', enum: Object.keys(ERROR_CODES) },
            message: { type: 'string' },
            details: { type: 'object', description: 'For bad input, `field` names the field; for 429, `retryAfterSeconds`.' },
          },
          required: ['code', 'message'],
          additionalProperties: false,
        },
        Error: {
          type: 'object',
          properties: { error: { $ref: '#/components/schemas/ErrorObject' } },
          required: ['error'],
          additionalProperties: false,
        },
      },
      headers: {
        ...Object.fromEntries(Object.entries(RATE_LIMIT_HEADERS).map(([name, description]) => [name, { description, schema: { type: 'integer', minimum: 0 } }])),
        'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } },
      },
    },
  };
}

/** Two rows on one path and method (JSON and multipart) are one operation with two bodies. */
function mergeInto(target: Record<string, unknown>, other: Record<string, unknown>) {
  const body = target.requestBody as { content: Record<string, unknown> } | undefined;
  const otherBody = other.requestBody as { content: Record<string, unknown> } | undefined;
  if (body && otherBody) body.content = { ...body.content, ...otherBody.content };
  if (other.description && other.description !== target.description) target.description = [target.description, other.description].filter(Boolean).join('\n\n');
  target['x-interface-endpoint'] = [...(target['x-interface-endpoint'] as string[]), ...(other['x-interface-endpoint'] as string[])];
  const responses = target.responses as Record<string, unknown>;
  for (const [status, response] of Object.entries(other.responses as Record<string, unknown>)) responses[status] ??= response;
  // Either row's callers may call it: anonymous when one of them is public.
  const security = target.security as object[];
  for (const s of other.security as object[]) if (!security.some((x) => JSON.stringify(x) === JSON.stringify(s))) security.push(s);
}
