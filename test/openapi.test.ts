/**
 * The OpenAPI description of the REST layer (issue 13, item 2): served, valid by an OpenAPI
 * parser, complete against interface.md, derived from the route table; the offline docs page in
 * a real browser. The responses of every REST test are checked against it by test/setup.ts.
 */
import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi, type OpenApiDocument } from '../rest/openapi.ts';
import { routes, type RestRoute } from '../rest/routes.ts';
import { createSchema } from '../src/graphql/schema.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { responseProblems } from './support/openapi-check.ts';
import { readSse } from './support/sse.ts';

let app: TestApp;
let doc: OpenApiDocument;

beforeAll(async () => {
  app = await startTestApp();
  const res = await http<OpenApiDocument>('GET', `${app.api}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = res.body;
});
afterAll(() => app?.close());

type Op = {
  operationId: string;
  summary: string;
  description?: string;
  security: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema: Record<string, unknown> }[];
  requestBody?: { content: Record<string, { schema: any }> };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: any; example?: unknown }> }>;
};
const op = (method: string, path: string) => (doc.paths[path] as Record<string, Op> | undefined)?.[method.toLowerCase()];

/** Every endpoint of interface.md, as written there (numbered), with its documented bearer authentication. */
const INTERFACE = [
  { n: 1, method: 'POST', path: '/external/datastores/file-upload/generate-link/{id}', bearer: true },
  { n: 2, method: 'POST', path: '/external/datastores/file-upload/process/{id}', bearer: true },
  { n: 3, method: 'POST', path: '/external/datastores/update/{id}', bearer: true },
  { n: 3, method: 'POST', path: '/datastores/update/{id}', bearer: true },
  { n: 4, method: 'POST', path: '/datastores/{id}/query', bearer: true },
  { n: 5, method: 'POST', path: '/external/datastores/file-upload/{id}', bearer: true },
  { n: 6, method: 'POST', path: '/datasources', bearer: true },
  { n: 7, method: 'POST', path: '/agents/{id}/query', bearer: true },
  { n: 8, method: 'POST', path: '/agents/{id}/universal', bearer: true },
  { n: 9, method: 'POST', path: '/forms/{formId}/chat', bearer: false },
  { n: 10, method: 'GET', path: '/agents/{id}', bearer: false },
  { n: 11, method: 'PATCH', path: '/agents/{id}', bearer: true },
  { n: 12, method: 'DELETE', path: '/agents/{id}', bearer: true },
  { n: 13, method: 'GET', path: '/conversations/{conversationId}', bearer: false },
];
/** Path parameters are named as the route table names them; the interface's names differ only in spelling. */
const normalize = (path: string) => path.replace(/\{[^}]+\}/g, '{}');

describe('the served document', () => {
  it('is a valid OpenAPI 3.1 document by @apidevtools/swagger-parser', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: '/api' }]);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it('the parser does reject a broken 3.1 document (the check above can fail)', async () => {
    const broken = structuredClone(doc) as any;
    delete broken.paths['/agents/{id}'].get.responses['200'].description;
    await expect(SwaggerParser.validate(broken)).rejects.toThrow(/description/);
    const wrongType = structuredClone(doc) as any;
    wrongType.paths['/agents/{id}'].get.parameters[0].in = 'body';
    await expect(SwaggerParser.validate(wrongType)).rejects.toThrow();
  });

  it.each(INTERFACE)('has interface endpoint $n: $method $path, with 200, the error body and its security', ({ method, path, bearer }) => {
    const key = Object.keys(doc.paths).find((p) => normalize(p) === normalize(path));
    expect(key, `${method} ${path}`).toBeDefined();
    const o = op(method, key!)!;
    expect(o, `${method} ${path}`).toBeDefined();
    expect(o.summary.length).toBeGreaterThan(3);
    expect(o.responses['200']!.content!['application/json']!.schema).toBeTruthy();
    for (const status of ['400', '404']) expect(o.responses[status]!.content!['application/json']!.schema).toBeTruthy();
    // Bearer is accepted everywhere the interface shows it; where it also serves anonymous callers, `{}` says it is optional.
    expect(o.security).toContainEqual({ bearer: [] });
    if (bearer) expect(o.responses['401'], `${method} ${path} lists 401`).toBeDefined();
    if (!bearer) expect(o.security).toContainEqual({});
    if (method !== 'GET') expect(Object.keys(o.responses)).toEqual(expect.arrayContaining(['413', '415']));
  });

  it('describes the error body of the table, and the universal processor its own success:false shape', () => {
    expect(op('GET', '/agents/{id}')!.responses['404']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.components.schemas!.ErrorObject).toMatchObject({ required: ['code', 'message'], properties: { code: { enum: expect.arrayContaining(['UNAUTHENTICATED', 'RATE_LIMITED']) } } });
    const universal400 = op('POST', '/agents/{id}/universal')!.responses['400']!.content!['application/json']!;
    expect(universal400.schema.properties).toEqual({ success: { const: false }, error: { $ref: '#/components/schemas/ErrorObject' } });
    expect(universal400.example).toMatchObject({ success: false, error: { code: 'BAD_USER_INPUT' } });
  });

  it('derives request bodies from the GraphQL input types, in REST names and with their bounds', () => {
    const query = op('POST', '/agents/{id}/query')!.requestBody!.content['application/json']!.schema;
    expect(query.required).toEqual(['query']);
    expect(query.properties.temperature).toMatchObject({ minimum: 0, maximum: 1 });
    expect(query.properties.presencePenalty).toMatchObject({ minimum: -2, maximum: 2 });
    expect(query.properties.modelName.enum).toEqual(['model_3_5_turbo', 'model_3_5_turbo_16k', 'model_4', null]);
    expect(query.properties.promptType.deprecated).toBe(true);
    expect(query.additionalProperties).toBe(false);
    const datasource = op('POST', '/datasources')!.requestBody!.content;
    expect(Object.keys(datasource)).toEqual(expect.arrayContaining(['multipart/form-data', 'application/json']));
    expect(Object.keys(datasource['application/json']!.schema.properties)).toContain('custom_id');
    expect(Object.keys(datasource['application/json']!.schema.properties)).not.toContain('customId');
    expect(op('PATCH', '/agents/{id}')!.requestBody!.content['application/json']!.schema.required).toEqual(['description']);
    expect(op('GET', '/conversations/{id}')!.parameters!.map((p) => `${p.in}:${p.name}`)).toEqual(['path:id', 'query:limit', 'query:cursor']);
  });

  it('derives responses from the rows: the datasource record says custom_id, the conversation its page', () => {
    const record = op('POST', '/external/datastores/file-upload/{id}')!.responses['200']!.content!['application/json']!.schema;
    expect(record.required).toEqual(expect.arrayContaining(['id', 'status', 'custom_id', 'datastoreId']));
    expect(record.properties.status.enum).toEqual(expect.arrayContaining(['unsynched', 'synched', 'usage_limit_reached']));
    const conversation = op('GET', '/conversations/{id}')!.responses['200']!.content!['application/json']!.schema;
    expect(Object.keys(conversation.properties)).toEqual(['id', 'agentId', 'formId', 'visitorId', 'createdAt', 'messages', 'nextCursor']);
  });

  it('describes the streams as text/event-stream with their events and the [DONE] and [ERROR] markers', () => {
    for (const [path, events] of [
      ['/agents/{id}/query', ['answer', 'endpoint_response']],
      ['/forms/{formId}/chat', ['answer', 'metadata', 'endpoint_response']],
    ] as const) {
      const sse = op('POST', path)!.responses['200']!.content!['text/event-stream']!;
      for (const event of events) expect(sse.schema.description).toContain(`event: ${event}`);
      expect(sse.schema.description).toContain('data: [DONE]');
      expect(sse.schema.description).toContain('data: [ERROR]');
      expect(sse.example).toMatch(/event: answer\ndata: …\n\n[\s\S]*data: \[DONE\]\n\n$/);
    }
    expect(op('POST', '/datastores/{id}/query')!.responses['200']!.content!['text/event-stream']).toBeUndefined();
  });

  it('lists 429 with Retry-After and the rate-limit headers on limited rows only', () => {
    for (const [method, path] of [['POST', '/agents/{id}/query'], ['POST', '/forms/{formId}/chat'], ['POST', '/agents/{id}/universal'], ['POST', '/datastores/{id}/query']]) {
      const o = op(method!, path!)!;
      expect(Object.keys(o.responses['429']!.headers!)).toEqual(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
      expect(Object.keys(o.responses['200']!.headers!)).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
    }
    const get = op('GET', '/agents/{id}')!;
    expect(get.responses['429']).toBeUndefined();
    expect(get.responses['200']!.headers).toBeUndefined();
  });

  it('the signed upload link (served at the root) needs no credentials', () => {
    const put = (doc.paths['/uploads/{token}'] as any);
    expect(put.servers).toEqual([{ url: '/' }]);
    expect(put.put.security).toEqual([]);
    expect(put.put.responses['401']).toBeUndefined();
  });
});

describe('one source of truth: the route table', () => {
  it('every row has its description, and each is in the document', () => {
    for (const route of routes) {
      expect(route.doc?.summary?.trim(), `${route.method} ${route.path}`).toBeTruthy();
      const o = op(route.method, route.path.replace(/:([A-Za-z]+)/g, '{$1}'));
      expect(o, `${route.method} ${route.path}`).toBeDefined();
      expect((o as unknown as Record<string, string[]>)['x-interface-endpoint']).toContain(route.endpoint);
    }
  });

  it('a new row without its description fails the build of the document', async () => {
    const schema = await createSchema();
    const undescribed = { ...routes[0], path: '/new/:id', doc: undefined } as unknown as RestRoute;
    expect(() => buildOpenApi({ schema, routes: [...routes, undescribed], basePath: '/api' })).toThrow(/no description/);
    const blank = { ...routes[0], path: '/new/:id', doc: { summary: ' ' } } as RestRoute;
    expect(() => buildOpenApi({ schema, routes: [...routes, blank], basePath: '/api' })).toThrow(/no description/);
  });

  it('follows REST_BASE_PATH', async () => {
    const other = await startTestApp({ REST_BASE_PATH: '/v1' });
    try {
      const res = await http<OpenApiDocument>('GET', `${other.url}/v1/openapi.json`);
      expect(res.body.servers).toEqual([{ url: '/v1' }]);
      const page = await http('GET', `${other.url}/v1/docs`);
      expect(page.body).toContain('data-spec="/v1/openapi.json"');
      expect((await http('GET', `${other.url}/api/openapi.json`)).status).toBe(404);
    } finally {
      await other.close();
    }
  });
});

describe('the response check of test/setup.ts', () => {
  it('reports a body that does not match and a status that is not listed; passes a matching one', () => {
    const url = (path: string) => `${app.url}/api${path}`;
    const agent = { id: 'x', handle: null, name: 'A', description: '', visibility: 'public' };
    expect(responseProblems(doc, [{ method: 'GET', url: url('/agents/x'), status: 200, body: agent }])).toEqual([]);
    const [wrongBody] = responseProblems(doc, [{ method: 'GET', url: url('/agents/x'), status: 200, body: { ...agent, visibility: 'secret', extra: 1 } }]);
    expect(wrongBody).toMatch(/GET \/api\/agents\/x answered 200, a body that does not match the document: .*visibility.*allowed values/);
    const [wrongStatus] = responseProblems(doc, [{ method: 'GET', url: url('/agents/x'), status: 409, body: { error: { code: 'CONFLICT', message: 'm' } } }]);
    expect(wrongStatus).toMatch(/answered 409, a status the document does not list for GET \/agents\/\{id\}/);
    const [badError] = responseProblems(doc, [{ method: 'POST', url: url('/agents/x/universal'), status: 400, body: { error: { code: 'BAD_USER_INPUT', message: 'm' } } }]);
    expect(badError).toMatch(/must have required property 'success'/);
    const stream = (events: { event?: string; data: string }[]) => responseProblems(doc, [{ url: url('/agents/x/query'), status: 200, events }]);
    expect(stream([{ event: 'answer', data: 'Hi' }, { event: 'endpoint_response', data: '{}' }, { data: '[DONE]' }])).toEqual([]);
    expect(stream([{ event: 'answer', data: 'Hi' }, { data: '[ERROR]The model endpoint failed.' }])).toEqual([]);
    expect(stream([{ event: 'answer', data: 'Hi' }, { event: 'surprise', data: '{}' }])).toEqual([
      expect.stringMatching(/event surprise is not among the documented events \(answer, endpoint_response\)/),
      expect.stringMatching(/the stream ended with "\{\}", neither \[DONE\] nor \[ERROR\]/),
    ]);
    // Paths the document does not describe are not its business.
    expect(responseProblems(doc, [{ method: 'POST', url: `${app.url}/graphql`, status: 200, body: {} }])).toEqual([]);
  });
});

describe('a real stream', () => {
  it('uses only the documented events and ends with [DONE] (and test/setup.ts checks every stream read with readSse)', async () => {
    const org = await newOrganization(app.url);
    const created = await gql(app.url, `mutation { createAgent(input: { name: "Streamer", visibility: public }) { id } }`, {}, { token: org.apiKey });
    const res = await fetch(`${app.api}/agents/${created.data.createAgent.id}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'Hello?', streaming: true }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readSse(res);
    const listed = op('POST', '/agents/{id}/query')!.responses['200']!.content!['text/event-stream'] as unknown as { 'x-sse-events': string[] };
    expect(events.filter((e) => e.event).every((e) => listed['x-sse-events'].includes(e.event!))).toBe(true);
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['answer', 'endpoint_response']));
    expect(events.at(-1)!.data).toBe('[DONE]');
  });
});

describe('the docs page', () => {
  it('is served with a CSP that allows only this server, and every file it loads comes from here', async () => {
    const page = await http('GET', `${app.api}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    const html = page.body as string;
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/); // no inline script
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBe(4);
    for (const ref of refs) {
      expect(ref).toMatch(/^\/api\/docs\//);
      const res = await fetch(`${app.url}${ref}`);
      expect(res.status, ref).toBe(200);
      await res.arrayBuffer();
    }
    const init = await fetch(`${app.api}/docs/init.js`);
    expect(await init.text()).toBe(readFileSync(new URL('../rest/docs-page/init.js', import.meta.url), 'utf8'));
    expect((await http('GET', `${app.api}/docs/..%2F..%2Fpackage.json`)).status).toBe(404);
    expect((await http('GET', `${app.api}/docs/index.html`)).status).toBe(404);
  });

  it('renders the operations in a real browser, offline, without a CSP violation', async () => {
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      const foreign: string[] = [];
      page.on('console', (m) => void (m.type() === 'error' && problems.push(m.text())));
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('request', (r) => void (!r.url().startsWith(app.url) && !r.url().startsWith('data:') && foreign.push(r.url())));
      await page.goto(`${app.api}/docs`);
      await page.getByText('Ask an agent').first().waitFor({ timeout: 20_000 });
      expect(await page.locator('.opblock').count()).toBe(Object.values(doc.paths).flatMap((item) => Object.keys(item).filter((k) => k !== 'servers')).length);
      await page.getByText('Ask an agent').first().click();
      await page.getByText('text/event-stream').first().waitFor({ timeout: 10_000 });
      expect(problems).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
