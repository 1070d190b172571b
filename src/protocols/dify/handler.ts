/**
 * Dify's External Knowledge API (docs/dify.md): `POST /dify/retrieval` answers a datastore query
 * in Dify's shapes. The search is RetrievalService.query, with the datastore query's access
 * rules; this file translates the request, the records and the errors, and applies
 * `metadata_condition` and `score_threshold`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badInput, statusOf, type ErrorCode } from '../../errors.ts';
import type { Context } from '../../graphql/context.ts';
import { normalizeError } from '../../graphql/errors.ts';
import { assertStorableText } from '../../graphql/text-guard.ts';
import { drain, readJsonBody } from '../../http/body.ts';
import { documentFacts, type DocumentFacts } from '../../ingestion/document-facts.ts';
import { TOP_K_MAX, type Fragment, type SearchFilters } from '../../retrieval/retrieval.service.ts';
import { isRecord, sendJson, type ProtocolHandler, type ProtocolOptions } from '../http.ts';
import { matches, namesOf, parseMetadataCondition, type MetadataCondition } from './conditions.ts';

export const DIFY_PREFIX = '/dify';
/** Keys a fragment has but its document does not: conditions on them are applied after the search. */
const FRAGMENT_KEYS = new Set(['source', 'page']);
/** The most datasource ids a search filter takes (RetrievalService's bound). */
const MAX_FILTER_IDS = 1000;

/** Dify's documented codes; other failures carry their HTTP status as the code. */
const DIFY_CODE: Partial<Record<ErrorCode, number>> = { UNAUTHENTICATED: 1002, FORBIDDEN: 1002, NOT_FOUND: 2001 };

class DifyError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

interface RetrievalRequest {
  knowledgeId: string;
  query: string;
  topK: number;
  scoreThreshold: number;
  condition: MetadataCondition | null;
}

export function createDifyHandler(opts: ProtocolOptions): ProtocolHandler {
  const send = (res: ServerResponse, status: number, code: number, message: string) => sendJson(res, status, { error_code: code, error_msg: message });

  return (req, res, pathname) => {
    if (pathname !== DIFY_PREFIX && !pathname.startsWith(`${DIFY_PREFIX}/`)) return false;
    const path = pathname.slice(DIFY_PREFIX.length).replace(/\/$/, '');
    if (path !== '/retrieval' || req.method !== 'POST') {
      drain(req);
      send(res, 404, 404, `No route for ${req.method} ${pathname}; the External Knowledge API is POST ${DIFY_PREFIX}/retrieval.`);
      return true;
    }
    void (async () => {
      try {
        await retrieval(req, res);
      } catch (err) {
        drain(req);
        if (err instanceof DifyError) return send(res, err.status, err.code, err.message);
        const { error, internal } = normalizeError(err);
        if (internal) opts.onInternalError(error.originalError ?? err, req);
        const status = statusOf(error.code);
        const code = DIFY_CODE[error.code] ?? status;
        // Dify's contract answers failed authorization and unknown knowledge with these statuses.
        send(res, code === 1002 ? 403 : code === 2001 ? 404 : status, code, code === 1002 ? 'Authorization failed.' : code === 2001 ? 'The knowledge does not exist.' : error.message);
      }
    })();
    return true;
  };

  async function retrieval(req: IncomingMessage, res: ServerResponse) {
    if (!/^Bearer\s+\S+\s*$/i.test(req.headers.authorization ?? '')) {
      throw new DifyError(403, 1001, 'Invalid Authorization header format. Expected "Bearer <api-key>" format.');
    }
    const ctx = await opts.context(req);
    const request = parseRequest(await readJsonBody(req, opts.bodyLimitBytes));
    // The datastore query's access rule, before anything of the datastore is read.
    const datastore = await ctx.services.datastores.getForQuery(ctx.em, ctx.auth, request.knowledgeId, ctx.origin);
    const plan = request.condition ? await narrow(ctx, datastore.id, request) : { topK: request.topK, filters: {}, facts: null };
    if (!plan) return sendJson(res, 200, { records: [] });
    const fragments = await ctx.services.retrieval.query(ctx.em, ctx.auth, ctx.ip, datastore.id, { query: request.query, topK: plan.topK, filters: plan.filters, minScore: request.scoreThreshold || null }, ctx.origin);
    const facts = plan.facts ?? (fragments.length ? await documentFacts(ctx.em, datastore.id, [...new Set(fragments.map((f) => f.datasource_id))]) : new Map<string, DocumentFacts>());
    // score_threshold is the query's minScore: the search itself leaves weaker fragments out.
    const records = fragments
      .map((f) => ({ content: f.text, score: f.score, title: f.datasource_name, metadata: metadataOf(f, facts.get(f.datasource_id)) }))
      .filter((r) => !request.condition || matches(request.condition, r.metadata))
      .slice(0, request.topK);
    sendJson(res, 200, { records });
  }
}

/**
 * How to search under a condition: conditions on document keys become a datasource filter inside
 * the search (so top_k fragments come back whenever that many match); conditions on fragment keys
 * are applied to the best TOP_K_MAX fragments. Null when no document can match.
 */
async function narrow(ctx: Context, datastoreId: string, request: RetrievalRequest): Promise<{ topK: number; filters: SearchFilters; facts: Map<string, DocumentFacts> } | null> {
  const condition = request.condition!;
  const facts = await documentFacts(ctx.em, datastoreId);
  const onDocuments = [...namesOf(condition)].every((name) => !FRAGMENT_KEYS.has(name));
  if (!onDocuments) return { topK: TOP_K_MAX, filters: {}, facts };
  const ids = [...facts.values()].filter((doc) => matches(condition, metadataOf(null, doc))).map((doc) => doc.id);
  if (!ids.length) return null;
  if (ids.length === facts.size) return { topK: request.topK, filters: {}, facts };
  if (ids.length <= MAX_FILTER_IDS) return { topK: request.topK, filters: { datasource_ids: ids }, facts };
  return { topK: TOP_K_MAX, filters: {}, facts };
}

/** The record's metadata: the document's own keys, then the fixed ones (which win). */
function metadataOf(fragment: Fragment | null, doc: DocumentFacts | undefined | null): Record<string, unknown> {
  const fixed: Record<string, unknown> = {
    datasource_id: fragment?.datasource_id ?? doc?.id ?? null,
    datasource_name: fragment?.datasource_name ?? doc?.name ?? null,
    custom_id: fragment ? fragment.custom_id : (doc?.customId ?? null),
  };
  if (fragment) Object.assign(fixed, { source: fragment.source, page: fragment.page });
  return { ...(doc?.metadata ?? {}), ...fixed };
}

/** Throws BAD_USER_INPUT naming the field. */
function parseRequest(body: unknown): RetrievalRequest {
  if (!isRecord(body)) throw badInput('The request body must be a JSON object.');
  // The query reaches SQL: text PostgreSQL cannot hold is a 400, as on every other path.
  assertStorableText({ input: body });
  const { knowledge_id: knowledgeId, query, retrieval_setting: setting } = body;
  if (typeof knowledgeId !== 'string' || !knowledgeId) throw badInput('knowledge_id is required: the id of a datastore.', { field: 'knowledge_id' });
  if (typeof query !== 'string' || !query.trim()) throw badInput('query is required.', { field: 'query' });
  if (!isRecord(setting)) throw badInput('retrieval_setting is required: { top_k, score_threshold }.', { field: 'retrieval_setting' });
  const topK = setting.top_k;
  if (typeof topK !== 'number' || !Number.isInteger(topK) || topK < 1 || topK > TOP_K_MAX) {
    throw badInput(`retrieval_setting.top_k must be a whole number from 1 to ${TOP_K_MAX}.`, { field: 'retrieval_setting.top_k' });
  }
  const threshold = setting.score_threshold ?? 0;
  if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1)) {
    throw badInput('retrieval_setting.score_threshold must be a number from 0 to 1.', { field: 'retrieval_setting.score_threshold' });
  }
  return { knowledgeId, query, topK, scoreThreshold: threshold, condition: parseMetadataCondition(body.metadata_condition) };
}
