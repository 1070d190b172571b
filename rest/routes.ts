/**
 * The documented REST paths (interface.md), each one row: the GraphQL operation it runs, how
 * the request maps to its variables, and how the result is shaped back into the documented
 * JSON. No access rule and no validation lives here: the resolvers and the schema decide.
 */

import { AppError, type ErrorBody, type ErrorCode } from '../src/errors.ts';
import type { Context } from '../src/graphql/context.ts';
import type { UploadedPart } from '../src/http/body.ts';
import type { Datasource } from '../src/ingestion/datasource.entity.ts';
import { LocalStorage, type IncomingUpload } from '../src/providers/local-storage.ts';
import type { FieldNames } from './fields.ts';
import type { JsonSchema, SchemaTools } from './json-schema.ts';
import { DONE, responseFrames, type SseFrame } from './sse.ts';

export interface RestRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body, or the text fields of a multipart body; undefined when there was none. */
  body: unknown;
  /** The `file` part of a multipart body. */
  file?: UploadedPart;
}

/**
 * Who may call a row, decided from the request's headers alone, before a byte of its body is
 * read (a stranger's upload is refused while it is still arriving):
 * - `public`: anyone; the service decides per resource (public datastore, agent, form...).
 * - `member`: an API key or a session; anyone else gets 401 at once.
 * - `link`: the path itself is the credential (a signed upload link); Authorization is not read.
 * An invalid Bearer token is 401 on `public` and `member` rows alike.
 */
export type Access = 'public' | 'member' | 'link';

/**
 * What only a person can say about a row, for its OpenAPI description (rest/openapi.ts derives
 * the rest: parameters, request body from the GraphQL input type, response from the selection,
 * security and the statuses of its access, the error body).
 */
export interface RouteDoc {
  summary: string;
  description?: string;
  /** What each path parameter names. */
  params?: Record<string, string>;
  /**
   * Codes this row's service answers beyond those rest/openapi.ts derives for every row (400,
   * 403, 404, 500), for rows that read credentials (401) and for bodies (413, 415). RATE_LIMITED
   * also documents the rate-limit headers.
   */
  errors?: ErrorCode[];
  /** The request body, where it is not the document's `input` variable (multipart, loose variables). */
  body?: (t: SchemaTools) => JsonSchema;
  /** The 200 JSON, where `result` reshapes `data` (default: the operation's root field as selected). */
  response?: (t: SchemaTools) => JsonSchema;
  /** The events of a `stream`: name -> what its data carries. */
  events?: Record<string, string>;
}

interface RouteBase {
  /** Required: a row without its description fails the OpenAPI test too. */
  doc: RouteDoc;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  /** Path relative to the REST base path (or to the root with `root`); `:name` segments become params. */
  path: string;
  /** The interface.md endpoint this row implements. */
  endpoint: string;
  access: Access;
  /** Served at the root rather than under the REST base path: the upload links this service hands out. */
  root?: true;
  /**
   * The `:id` names an agent or datastore a page on another site may call: a browser's preflight
   * of this path is answered against that resource's allowedOrigins (src/http/cors.ts).
   */
  origins?: 'agent' | 'datastore';
  /** The JSON body carries a base64 file: its limit is the upload cap once encoded, not the JSON limit. */
  carriesFile?: boolean;
  /** Shapes this row's error bodies (default: the table's `{ error }`). */
  failure?: (body: ErrorBody) => unknown;
  /** REST names of GraphQL variable paths, for error messages (`input` is the body by default). */
  fields?: FieldNames;
}

/** Most rows: a GraphQL operation against the shared schema. */
export interface OperationRoute extends RouteBase {
  body: 'json';
  /** A GraphQL document with exactly one operation. */
  document: string;
  variables: (req: RestRequest) => Record<string, unknown>;
  /** Picks the documented JSON out of `data`. */
  result: (data: Record<string, unknown>) => unknown;
  /** When `when` holds, the row answers with server-sent events from a GraphQL subscription instead. */
  stream?: {
    when: (req: RestRequest) => boolean;
    document: string;
    /** The SSE frames of one subscription event (`data` of one result). */
    frames: (data: Record<string, unknown>) => SseFrame[];
    /**
     * The frames of an event whose result is known without executing the document for it (a
     * text fragment), or null to execute it: each streamed token would otherwise pay a GraphQL
     * execution (building its context, coercing the input again) for a result it already has.
     */
    direct?: (event: unknown) => SseFrame[] | null;
  };
}

/** File uploads: GraphQL cannot carry a multipart file, so the row calls the service the resolver would. */
export interface UploadRoute extends RouteBase {
  body: 'multipart';
  run: (ctx: Context, req: RestRequest) => Promise<unknown>;
}

/** The body is handed over unread, as a stream (bytes PUT to an upload link). */
export interface StreamRoute extends RouteBase {
  body: 'stream';
  run: (ctx: Context, req: RestRequest, upload: IncomingUpload) => Promise<unknown>;
}

export type RestRoute = OperationRoute | UploadRoute | StreamRoute;

/** The Agent record of interface.md endpoint 11, plus handle and timestamps. */
const AGENT_RECORD = `id handle name description modelName temperature visibility systemPrompt userPrompt promptType promptTemplate allowedOrigins createdAt updatedAt`;

/** The Datasource record of the interface, plus what a user needs to see. */
const DATASOURCE_RECORD = `id type name status groupId updatedAt createdAt lastSynch config datastoreId errorMessage chunkCount tokenCount size customId mimeType fileName`;

/** The JSON of a datasource as REST answers it (`datasourceRecord`, `datasourceEntity`). */
const datasourceSchema = (t: SchemaTools) => t.select('Datasource', DATASOURCE_RECORD, { rename: { customId: 'custom_id' } });

/** A multipart body: the `file` part and text fields (name -> what it is). */
function multipartFile(textFields: Record<string, string>, required: string[] = []): JsonSchema {
  const properties = Object.fromEntries(Object.entries(textFields).map(([name, description]) => [name, { type: 'string', description }]));
  return { type: 'object', properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The file.' }, ...properties }, required: ['file', ...required] };
}

/** REST speaks custom_id (as in its requests); GraphQL customId. */
function datasourceRecord(ds: Record<string, unknown>) {
  const { customId, ...rest } = ds;
  return { ...rest, custom_id: customId ?? null };
}

function datasourceEntity(ds: Datasource) {
  return datasourceRecord({
    id: ds.id,
    type: ds.type,
    name: ds.name,
    status: ds.status,
    groupId: ds.groupId ?? null,
    updatedAt: ds.updatedAt,
    createdAt: ds.createdAt,
    lastSynch: ds.lastSynch ?? null,
    config: ds.config,
    datastoreId: ds.datastore.id,
    errorMessage: ds.errorMessage ?? null,
    chunkCount: ds.chunkCount,
    tokenCount: ds.tokenCount,
    size: ds.size == null ? null : Number(ds.size),
    customId: ds.customId ?? null,
    mimeType: ds.mimeType ?? null,
    fileName: ds.fileName ?? null,
  });
}

const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
const fields = (req: RestRequest) => (req.body ?? {}) as Record<string, unknown>;

const FRAGMENT = `text score source datasource_id datasource_name`;
const ANSWER = `answer conversationId visitorId messageId sources { ${FRAGMENT} }`;
const FORM_STATE = `conversationId visitorId currentField isValid values status`;

export const routes: RestRoute[] = [
  {
    doc: {
      summary: 'Query a datastore',
      description: 'The fragments most similar to `query` (vector and full-text search fused into one ranking), best first. A public datastore answers anyone.',
      params: { id: 'The datastore id.' },
      errors: ['RATE_LIMITED', 'UPSTREAM_FAILED'],
    },
    method: 'POST',
    path: '/datastores/:id/query',
    origins: 'datastore',
    endpoint: '4. Datastore query',
    access: 'public',
    body: 'json',
    document: `query DatastoreQuery($id: ID!, $input: DatastoreQueryInput!) { datastoreQuery(id: $id, input: $input) { ${FRAGMENT} } }`,
    variables: (req) => ({ id: req.params.id, input: req.body }),
    result: (data) => data.datastoreQuery,
  },
  {
    doc: {
      summary: 'Ask an agent',
      description: 'An answer grounded in the agent\'s datastores; both messages are stored in the conversation. With `streaming: true` the answer is `text/event-stream`; every refusal comes as a JSON error before the stream starts.',
      params: { id: 'The agent id or `@handle`.' },
      errors: ['PAYMENT_REQUIRED', 'RATE_LIMITED', 'UPSTREAM_FAILED'],
      events: {
        answer: 'A text fragment of the answer; concatenate them (a fragment with newlines spans several `data:` lines).',
        endpoint_response: 'A piece of a JSON text; concatenated they parse as `{conversationId, visitorId, messageId, sources}`.',
      },
    },
    method: 'POST',
    path: '/agents/:id/query',
    origins: 'agent',
    endpoint: '7. Agent query',
    access: 'public',
    body: 'json',
    document: `mutation AgentQuery($id: ID!, $input: AgentQueryInput!) { agentQuery(id: $id, input: $input) { ${ANSWER} } }`,
    variables: (req) => ({ id: req.params.id, input: req.body }),
    // The same fields as the stream's endpoint_response, and the answer's text.
    result: (data) => data.agentQuery,
    stream: {
      when: (req) => (req.body as { streaming?: unknown } | undefined)?.streaming === true,
      document: `subscription AgentQueryStream($id: ID!, $input: AgentQueryInput!) { agentQueryStream(id: $id, input: $input) { type text response { ${ANSWER} } } }`,
      frames: (data) => {
        const event = data.agentQueryStream as { type: string; text: string | null; response: Record<string, unknown> | null };
        if (event.type === 'answer') return [{ event: 'answer', data: event.text ?? '' }];
        const { answer: _a, ...rest } = event.response ?? {};
        return [...responseFrames('endpoint_response', rest), DONE];
      },
      // What `frames` makes of an `answer` event's { type text } (AnswerEvent, src/answers/answer.inputs.ts).
      direct: (event) => {
        const e = event as { type?: unknown; text?: unknown };
        return e.type === 'answer' && typeof e.text === 'string' ? [{ event: 'answer', data: e.text }] : null;
      },
    },
  },
  {
    doc: {
      summary: 'Read a file with an agent (universal processor)',
      description: 'Extracts text and facts from an image, audio, video or document (base64) and answers `userQuery` about it. Error bodies carry `success: false` next to `error`.',
      params: { id: 'The agent id or `@handle`.' },
      errors: ['PAYMENT_REQUIRED', 'RATE_LIMITED', 'UPSTREAM_FAILED'],
    },
    method: 'POST',
    path: '/agents/:id/universal',
    origins: 'agent',
    endpoint: '8. Agent universal processor',
    access: 'public',
    body: 'json',
    carriesFile: true,
    document: `mutation Universal($agentId: ID!, $input: UniversalInput!) { universalProcess(agentId: $agentId, input: $input) { success messageText context } }`,
    variables: (req) => ({ agentId: req.params.id, input: req.body }),
    result: (data) => data.universalProcess,
    // The documented result has `success`: a failure says false next to the table's error.
    failure: (body) => ({ success: false, ...body }),
  },
  {
    doc: {
      summary: 'Chat with a form',
      description: 'One message of a visitor filling a form; the reply asks for the next field. No credentials. With `streaming: true` the answer is `text/event-stream`.',
      params: { formId: 'The form id.' },
      errors: ['CONFLICT', 'RATE_LIMITED'],
      events: {
        answer: 'A text fragment of the reply; concatenate them.',
        metadata: 'The JSON `{currentField, isValid}`.',
        endpoint_response: 'A piece of a JSON text; concatenated they parse as `{conversationId, visitorId, currentField, isValid, values, status}`.',
      },
    },
    method: 'POST',
    path: '/forms/:formId/chat',
    endpoint: '9. Form chat',
    access: 'public',
    body: 'json',
    document: `mutation FormChat($formId: ID!, $input: FormChatInput!) { formChat(formId: $formId, input: $input) { answer ${FORM_STATE} } }`,
    variables: (req) => ({ formId: req.params.formId, input: req.body }),
    result: (data) => data.formChat,
    stream: {
      when: (req) => (req.body as { streaming?: unknown } | undefined)?.streaming === true,
      document: `subscription FormChatStream($formId: ID!, $input: FormChatInput!) { formChatStream(formId: $formId, input: $input) { type text metadata { currentField isValid } response { ${FORM_STATE} } } }`,
      frames: (data) => {
        const event = data.formChatStream as { type: string; text: string | null; metadata: unknown; response: unknown };
        if (event.type === 'answer') return [{ event: 'answer', data: event.text ?? '' }];
        if (event.type === 'metadata') return [{ event: 'metadata', data: JSON.stringify(event.metadata) }];
        return [...responseFrames('endpoint_response', event.response), DONE];
      },
    },
  },
  {
    doc: {
      summary: 'Read a conversation',
      description: 'A page of messages, newest first. The conversation id is the visitor\'s access token: no credentials are needed. `nextCursor` (null on the last page) is the `cursor` of the next page.',
      params: { id: 'The conversation id.' },
      response: (t) =>
        t.select('Conversation', 'id agentId formId visitorId createdAt', {
          add: {
            messages: { type: 'array', items: t.select('Message', 'id from text sources createdAt') },
            nextCursor: { type: ['string', 'null'], description: 'The `cursor` of the next (older) page; null on the last.' },
          },
        }),
    },
    method: 'GET',
    path: '/conversations/:id',
    endpoint: '13. Get conversation',
    access: 'public',
    body: 'json',
    fields: { first: 'limit', after: 'cursor' },
    document: `query Conversation($id: ID!, $first: Int!, $after: String) { conversation(id: $id) { id agentId formId visitorId createdAt messages(first: $first, after: $after) { nodes { id from text sources createdAt } pageInfo { endCursor hasNextPage } } } }`,
    variables: (req) => ({
      id: req.params.id,
      after: req.query.get('cursor') || null,
      first: req.query.has('limit') ? Number(req.query.get('limit')) : 50,
    }),
    result: (data) => {
      const { messages, ...conversation } = data.conversation as { messages: { nodes: unknown[]; pageInfo: { endCursor: string | null; hasNextPage: boolean } } };
      return { ...conversation, messages: messages.nodes, nextCursor: messages.pageInfo.hasNextPage ? messages.pageInfo.endCursor : null };
    },
  },
  {
    doc: {
      summary: 'Make an upload link',
      description: 'A file datasource waiting for its file, and a pre-signed link to `PUT` the file to (valid 15 minutes); then call the process path with the returned id. No token for a public datastore.',
      params: { id: 'The datastore id.' },
      errors: ['PAYMENT_REQUIRED'],
    },
    method: 'POST',
    path: '/external/datastores/file-upload/generate-link/:id',
    origins: 'datastore',
    endpoint: '1. Generate upload link',
    access: 'public',
    body: 'json',
    document: `mutation GenerateLink($datastoreId: ID!, $input: UploadLinkInput!) { createUploadLink(datastoreId: $datastoreId, input: $input) { id link } }`,
    variables: (req) => ({ datastoreId: req.params.id, input: req.body }),
    result: (data) => data.createUploadLink,
  },
  {
    doc: {
      summary: 'Process an uploaded file',
      description: 'Queues processing of a file sent to its upload link. 400 when nothing was uploaded yet.',
      params: { id: 'The datastore id.' },
      body: () => ({ type: 'object', properties: { id: { type: 'string', description: 'The datasource id the upload link returned.' } }, required: ['id'] }),
      response: datasourceSchema,
    },
    method: 'POST',
    path: '/external/datastores/file-upload/process/:id',
    endpoint: '2. Process upload',
    access: 'public',
    body: 'json',
    document: `mutation ProcessUpload($datastoreId: ID!, $id: ID!) { processUpload(datastoreId: $datastoreId, id: $id) { ${DATASOURCE_RECORD} } }`,
    variables: (req) => ({ datastoreId: req.params.id, id: fields(req).id }),
    result: (data) => datasourceRecord(data.processUpload as Record<string, unknown>),
  },
  ...['/external/datastores/update/:id', '/datastores/update/:id'].map(
    (path): RestRoute => ({
      doc: {
        summary: 'Replace a text document',
        description: 'Replaces the text (and name, metadata) of a document and processes it again, so its embeddings follow. No token for a public datastore.',
        params: { id: 'The datastore id.' },
      },
      method: 'POST',
      path,
      origins: 'datastore',
      endpoint: '3. Update document',
      access: 'public',
      body: 'json',
      document: `mutation UpdateDocument($datastoreId: ID!, $input: UpdateDocumentInput!) { updateDocument(datastoreId: $datastoreId, input: $input) { id } }`,
      variables: (req) => ({ datastoreId: req.params.id, input: req.body }),
      result: (data) => data.updateDocument,
    }),
  ),
  {
    doc: {
      summary: 'Upload a file',
      description: 'Stores the file and queues its processing (asynchronous: the record says `unsynched`).',
      params: { id: 'The datastore id.' },
      errors: ['PAYMENT_REQUIRED'],
      body: () => multipartFile({ custom_id: 'Your own id, for filtering queries.', fileName: 'The name to show (default: the part\'s file name).' }),
      response: datasourceSchema,
    },
    method: 'POST',
    path: '/external/datastores/file-upload/:id',
    endpoint: '5. Direct file upload',
    access: 'member',
    body: 'multipart',
    run: async (ctx, req) =>
      datasourceEntity(
        await ctx.services.datasources.createFromFile(ctx.em, ctx.auth, req.params.id!, req.file, {
          customId: text(fields(req).custom_id),
          name: text(fields(req).fileName),
        }),
      ),
  },
  {
    doc: {
      summary: 'Create a datasource',
      description: 'A file (multipart, `type=file`), or as JSON a web page, a whole web site or a raw text document. Processing is asynchronous.',
      errors: ['PAYMENT_REQUIRED'],
      body: () => multipartFile({ type: 'The value `file`.', datastoreId: 'The datastore id.', custom_id: 'Your own id, for filtering queries.', fileName: 'The name to show.' }, ['type', 'datastoreId']),
      response: datasourceSchema,
    },
    method: 'POST',
    path: '/datasources',
    endpoint: '6. Create datasource (file)',
    access: 'member',
    body: 'multipart',
    run: async (ctx, req) => {
      const f = fields(req);
      return datasourceEntity(
        await ctx.services.datasources.createFromFile(ctx.em, ctx.auth, text(f.datastoreId) ?? '', req.file, {
          customId: text(f.custom_id),
          name: text(f.fileName),
          type: text(f.type) ?? 'file',
        }),
      );
    },
  },
  {
    doc: {
      summary: 'Create a datasource',
      description: 'A web page (`config.source_url`), a whole web site (`config.sitemap` or `config.source_url`) or a raw text document (`text`). A web page or site may take `resyncSchedule` (`none`, `daily`, `weekly` or a five-field cron expression, UTC) to be fetched again on; unchanged pages keep their chunks.',
      errors: ['PAYMENT_REQUIRED'],
      response: datasourceSchema,
    },
    method: 'POST',
    path: '/datasources',
    endpoint: '6. Create datasource (web_page, web_site, text)',
    access: 'public',
    body: 'json',
    fields: { 'input.customId': 'custom_id' },
    document: `mutation CreateDatasource($input: CreateDatasourceInput!) { createDatasource(input: $input) { ${DATASOURCE_RECORD} } }`,
    variables: (req) => {
      const { custom_id, ...rest } = fields(req);
      return { input: custom_id === undefined ? rest : { ...rest, customId: custom_id } };
    },
    result: (data) => datasourceRecord(data.createDatasource as Record<string, unknown>),
  },
  {
    doc: {
      summary: 'Read an agent',
      description: 'A public agent answers anyone; a private one only its organization.',
      params: { id: 'The agent id or `@handle`.' },
    },
    method: 'GET',
    path: '/agents/:id',
    origins: 'agent',
    endpoint: '10. Get agent',
    access: 'public',
    body: 'json',
    document: `query GetAgent($id: ID!) { agent(id: $id) { id handle name description visibility } }`,
    variables: (req) => ({ id: req.params.id }),
    result: (data) => data.agent,
  },
  {
    doc: {
      summary: 'Update an agent',
      description: '`description` is required; other fields absent are left as they are.',
      params: { id: 'The agent id or `@handle`.' },
      errors: ['CONFLICT'],
    },
    method: 'PATCH',
    path: '/agents/:id',
    endpoint: '11. Update agent',
    access: 'member',
    body: 'json',
    document: `mutation UpdateAgent($id: ID!, $input: UpdateAgentInput!) { updateAgent(id: $id, input: $input) { ${AGENT_RECORD} } }`,
    variables: (req) => ({ id: req.params.id, input: req.body }),
    result: (data) => data.updateAgent,
  },
  {
    doc: {
      summary: 'Delete an agent',
      description: 'Answers the deleted record. The body, if any, is the empty object.',
      params: { id: 'The agent id or `@handle`.' },
      body: () => ({ type: 'object', maxProperties: 0 }),
    },
    method: 'DELETE',
    path: '/agents/:id',
    endpoint: '12. Delete agent',
    access: 'member',
    body: 'json',
    // The documented empty JSON body carries nothing.
    document: `mutation DeleteAgent($id: ID!) { deleteAgent(id: $id) { ${AGENT_RECORD} } }`,
    variables: (req) => ({ id: req.params.id }),
    result: (data) => data.deleteAgent,
  },
  {
    doc: {
      summary: 'Send a file to its upload link',
      description: 'The link that make-an-upload-link hands out when files are stored on this server (with Google Cloud Storage the link points at the bucket instead). The body is the file, with the content type the link was made for; the path is the credential. Served at the root, not under the REST base path.',
      params: { token: 'The signed token of the link.' },
      body: () => ({ type: 'string', contentMediaType: 'application/octet-stream', description: 'The file\'s bytes.' }),
      response: () => ({ type: 'object', properties: { ok: { const: true } }, required: ['ok'] }),
    },
    method: 'PUT',
    path: '/uploads/:token',
    endpoint: '1. Generate upload link: the link it hands out (local storage)',
    root: true,
    access: 'link',
    body: 'stream',
    run: async (ctx, req, upload) => {
      // GCS links point at the bucket: on this server the path is no route at all.
      if (!(ctx.services.storage instanceof LocalStorage)) throw new AppError('NOT_FOUND', `No route for PUT /uploads/${req.params.token}.`);
      return { ok: true, ...(await ctx.services.storage.receiveUpload(req.params.token!, upload)) };
    },
  },
];
