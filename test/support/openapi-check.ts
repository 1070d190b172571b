/**
 * Every JSON response a test receives through `http()` (support/client.ts) from a REST path is
 * checked against the served OpenAPI document: its status must be listed for that path and
 * method, and its body must match that status's schema. test/setup.ts runs the check after each
 * test file, so every REST test keeps the document honest without asking.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { OpenApiDocument } from '../../rest/openapi.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

export interface RecordedResponse {
  /** Unknown for a stream read by support/sse.ts (it sees only the Response): then the path's streamed operation. */
  method?: string;
  url: string;
  status: number;
  body?: unknown;
  /** The frames of a text/event-stream response. */
  events?: { event?: string; data: string }[];
}

/** Responses received from a test app, by its origin (support/app.ts registers each app's REST base path). */
const restBases = new Map<string, string>();
const recorded: RecordedResponse[] = [];

export function registerRestBase(origin: string, basePath: string) {
  restBases.set(origin, basePath);
}

/** Called by `http()` for each JSON response; responses of other servers are not kept. */
export function recordResponse(response: RecordedResponse) {
  if (restBases.has(new URL(response.url).origin)) recorded.push(response);
}

/** Takes the responses recorded so far, grouped by the REST base path of the app that sent them. */
export function takeRecorded(): Map<string, RecordedResponse[]> {
  const byBase = new Map<string, RecordedResponse[]>();
  for (const r of recorded.splice(0)) {
    const base = restBases.get(new URL(r.url).origin)!;
    byBase.set(base, [...(byBase.get(base) ?? []), r]);
  }
  return byBase;
}

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown; 'x-sse-events'?: string[] }> }>;
}

/**
 * What is wrong with the responses according to the document: an undocumented status, or a body
 * that does not match. Paths and methods the document does not describe (GraphQL, health, an
 * unknown route's 404) are not its business and are skipped.
 */
export function responseProblems(document: OpenApiDocument, records: RecordedResponse[]): string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document as object, 'openapi.json');
  const base = document.servers[0]!.url.replace(/\/$/, '');
  const templates = Object.entries(document.paths).map(([template, item]) => {
    const servers = (item as { servers?: { url: string }[] }).servers;
    const prefix = (servers?.[0]?.url ?? base).replace(/\/$/, '');
    const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
    return { template, item: item as Record<string, Operation>, pattern: new RegExp(`^${prefix}${source}/?$`) };
  });

  const problems: string[] = [];
  for (const r of records) {
    const pathname = new URL(r.url).pathname;
    const match = templates.find((t) => t.pattern.test(pathname));
    const method = r.method?.toLowerCase() ?? Object.keys(match?.item ?? {}).find((m) => match!.item[m]!.responses?.['200']?.content?.['text/event-stream']);
    const operation = method ? match?.item[method] : undefined;
    if (!match || !operation || !method) continue;
    const verb = method.toUpperCase();
    const where = `${verb} ${pathname} answered ${r.status}`;
    const response = operation.responses[String(r.status)];
    if (!response) {
      problems.push(`${where}, a status the document does not list for ${verb} ${match.template}: ${JSON.stringify(r.body).slice(0, 300)}`);
      continue;
    }
    if (r.events) {
      const listed = response.content?.['text/event-stream']?.['x-sse-events'];
      if (!listed) {
        problems.push(`${where} with server-sent events, which the document does not describe for that status.`);
        continue;
      }
      for (const e of r.events) {
        if (e.event && !listed.includes(e.event)) problems.push(`${where}: event ${e.event} is not among the documented events (${listed.join(', ')}).`);
      }
      const last = r.events.at(-1)?.data ?? '';
      if (last !== '[DONE]' && !last.startsWith('[ERROR]')) problems.push(`${where}: the stream ended with ${JSON.stringify(last.slice(0, 100))}, neither [DONE] nor [ERROR].`);
      continue;
    }
    if (!response.content?.['application/json']?.schema) {
      problems.push(`${where} with JSON, which the document does not describe for that status.`);
      continue;
    }
    const pointer = ['paths', match.template, method, 'responses', String(r.status), 'content', 'application/json', 'schema']
      .map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1')))
      .join('/');
    const validate = ajv.getSchema(`openapi.json#/${pointer}`);
    if (!validate) {
      problems.push(`${where}: no schema at ${pointer}.`);
      continue;
    }
    if (!validate(r.body)) {
      problems.push(`${where}, a body that does not match the document: ${ajv.errorsText(validate.errors)}; body: ${JSON.stringify(r.body).slice(0, 300)}`);
    }
  }
  return problems;
}
