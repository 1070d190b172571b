/**
 * Browsers (issue 13, item 1): CORS headers and preflights on every path family, the session
 * cookie only from CORS_ORIGINS, Bearer tokens from anywhere, and an agent's or datastore's
 * allowedOrigins. First at the header level with fetch (which, unlike a browser, lets a test set
 * `Origin`), then in a real browser: Debian chromium driven by playwright-core, on a page served
 * from another localhost origin.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../rest/routes.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { readSse, summarize } from './support/sse.ts';

const DASHBOARD = 'https://dashboard.example';
const SHOP = 'https://shop.example';
const STRANGER = 'https://stranger.example';

let model: OpenAiTestServer;
let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
let openAgent: string;
let shopAgent: string;
let openStore: string;
let shopStore: string;
let shopDocument: string;

const chatCalls = () => model.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

function preflight(url: string, origin: string, opts: { method?: string; headers?: string } = {}) {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': opts.method ?? 'POST', 'access-control-request-headers': opts.headers ?? 'content-type' },
  });
}

const createAgent = async (input: Record<string, unknown>) => {
  const res = await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id allowedOrigins } }`, { i: { name: 'Widget', visibility: 'public', ...input } }, { token: org.apiKey });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data.createAgent as { id: string; allowedOrigins: string[] };
};

beforeAll(async () => {
  model = await startOpenAiTestServer();
  app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key', CORS_ORIGINS: `${DASHBOARD}, http://localhost:5173`, RATE_LIMIT_VISITOR_PER_MINUTE: '1000' });
  org = await newOrganization(app.url, 'Widgets');
  other = await newOrganization(app.url, 'Elsewhere');
  const store = async (allowedOrigins?: string[]) =>
    (await gql(app.url, `mutation($i: CreateDatastoreInput!) { createDatastore(input: $i) { id } }`, { i: { name: 'KB', visibility: 'public', ...(allowedOrigins ? { allowedOrigins } : {}) } }, { token: org.apiKey })).data
      .createDatastore.id as string;
  openStore = await store();
  shopStore = await store([SHOP]);
  const doc = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: shopStore, type: 'text', name: 'faq', text: 'Parcels leave the warehouse within two days.' } });
  expect(doc.status, JSON.stringify(doc.body)).toBe(200);
  shopDocument = doc.body.id;
  openAgent = (await createAgent({})).id;
  shopAgent = (await createAgent({ allowedOrigins: [SHOP] })).id;
}, 120_000);

afterAll(async () => {
  await app?.close();
  await model?.close();
});

describe('preflight', () => {
  it.each([
    ['agent query', () => `${app.api}/agents/${openAgent}/query`],
    ['get agent', () => `${app.api}/agents/${openAgent}`],
    ['universal processor', () => `${app.api}/agents/${openAgent}/universal`],
    ['datastore query', () => `${app.api}/datastores/${openStore}/query`],
    ['generate upload link', () => `${app.api}/external/datastores/file-upload/generate-link/${openStore}`],
    ['update document', () => `${app.api}/datastores/update/${openStore}`],
    ['form chat', () => `${app.api}/forms/00000000-0000-4000-8000-000000000000/chat`],
    ['conversation', () => `${app.api}/conversations/00000000-0000-4000-8000-000000000000`],
    ['upload link', () => `${app.url}/uploads/some-token`],
    ['/graphql', () => `${app.url}/graphql`],
    ['/graphql/stream', () => `${app.url}/graphql/stream`],
  ])('OPTIONS %s from any origin: 204 with the Access-Control headers', async (_name, url) => {
    const res = await preflight(url(), STRANGER, { headers: 'content-type, authorization' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('access-control-allow-methods')).toMatch(/\bPOST\b.*\bPATCH\b.*\bDELETE\b/);
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'last-event-id']));
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('vary')).toMatch(/origin/i);
  });

  it('an origin of CORS_ORIGINS is echoed with credentials allowed', async () => {
    const res = await preflight(`${app.url}/graphql`, DASHBOARD);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('vary')).toMatch(/origin/i);
  });

  it("an agent's allowedOrigins: a page outside the list gets no Access-Control-Allow-Origin; a listed page does", async () => {
    const refused = await preflight(`${app.api}/agents/${shopAgent}/query`, STRANGER);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
    const listed = await preflight(`${app.api}/agents/${shopAgent}/query`, SHOP);
    expect(listed.status).toBe(204);
    expect(listed.headers.get('access-control-allow-origin')).toBe('*');
    // The same agent by handle-less GET, and a datastore with its own list.
    expect((await preflight(`${app.api}/agents/${shopAgent}`, STRANGER, { method: 'GET' })).headers.get('access-control-allow-origin')).toBeNull();
    expect((await preflight(`${app.api}/datastores/${shopStore}/query`, STRANGER)).headers.get('access-control-allow-origin')).toBeNull();
    expect((await preflight(`${app.api}/datastores/update/${shopStore}`, STRANGER)).headers.get('access-control-allow-origin')).toBeNull();
    expect((await preflight(`${app.api}/datastores/${shopStore}/query`, SHOP)).headers.get('access-control-allow-origin')).toBe('*');
  });

  it('every public REST path that names an agent or datastore answers a preflight by its list', async () => {
    const guarded = routes.filter((r) => r.origins);
    // A public row whose :id is an agent or a datastore must say so, or browsers would skip its list.
    // (file-upload/process/:id names the datasource its link created: the link was the guarded step.)
    const naming = routes.filter((r) => r.access === 'public' && !r.root && /\/(agents|datastores)\b.*:id\b/.test(r.path) && !r.path.includes('/process/'));
    expect(naming.filter((r) => !r.origins).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(guarded.length).toBeGreaterThanOrEqual(7);
    for (const row of guarded) {
      const url = `${app.api}${row.path.replace(':id', row.origins === 'agent' ? shopAgent : shopStore)}`;
      const refused = await preflight(url, STRANGER, { method: row.method });
      expect([row.path, refused.status, refused.headers.get('access-control-allow-origin')]).toEqual([row.path, 403, null]);
      expect([row.path, (await preflight(url, SHOP, { method: row.method })).status]).toEqual([row.path, 204]);
    }
  });

  it('a preflight announcing Authorization passes: the key, read on the request, may be the owner\'s', async () => {
    const res = await preflight(`${app.api}/agents/${shopAgent}/query`, STRANGER, { headers: 'authorization, content-type' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('OPTIONS /api/agents/{id}/query without a preflight header is still no route', async () => {
    const res = await fetch(`${app.api}/agents/${openAgent}/query`, { method: 'OPTIONS' });
    expect(res.status).toBe(404);
  });
});

describe('responses', () => {
  it('a page of any origin reads a public agent\'s answer, with the headers it may read listed', async () => {
    const res = await call('POST', `${app.api}/agents/${openAgent}/query`, { body: { query: 'Hello?' }, headers: { origin: STRANGER } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.answer).toContain('Hello?');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = res.headers.get('access-control-expose-headers')!.split(/\s*,\s*/);
    expect(exposed).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id', 'X-Conversation-Id']);
  });

  it('requests without Origin (servers, curl) get no CORS headers and are not held to allowedOrigins', async () => {
    const res = await call('POST', `${app.api}/agents/${shopAgent}/query`, { body: { query: 'From a server' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('streams cross-origin: REST SSE and /graphql/stream carry the CORS headers', async () => {
    const sse = await fetch(`${app.api}/agents/${openAgent}/query`, { method: 'POST', headers: { origin: STRANGER, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'Stream it', streaming: true }) });
    expect(sse.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(sse.headers.get('access-control-allow-origin')).toBe('*');
    const { answer, last } = summarize(await readSse(sse));
    expect(answer).toContain('Stream it');
    expect(last).toBe('[DONE]');

    const stream = await fetch(`${app.url}/graphql/stream`, {
      method: 'POST',
      headers: { origin: STRANGER, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: `subscription($id: ID!) { agentQueryStream(id: $id, input: { query: "Over graphql-sse" }) { type text } }`, variables: { id: openAgent } }),
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('access-control-allow-origin')).toBe('*');
    const events = await readSse(stream);
    expect(events.filter((e) => e.event === 'next').map((e) => JSON.parse(e.data).data.agentQueryStream.text ?? '').join('')).toContain('Over graphql-sse');
  });

  it('a Bearer token works from any origin', async () => {
    const res = await gql(app.url, `{ agents(first: 5) { nodes { id } } }`, {}, { token: org.apiKey, headers: { origin: STRANGER } });
    expect(res.errors).toBeUndefined();
    expect(res.data.agents.nodes.length).toBeGreaterThan(0);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('the session cookie counts only from CORS_ORIGINS; from elsewhere the request is anonymous', async () => {
    const cookie = `ab_session=${org.session}`;
    const listed = await gql(app.url, `{ me { via organization { id } } }`, {}, { headers: { cookie, origin: DASHBOARD } });
    expect(listed.errors).toBeUndefined();
    expect(listed.data.me.organization.id).toBe(org.organizationId);
    expect(listed.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
    expect(listed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(listed.headers.get('vary')).toMatch(/origin/i);

    const unlisted = await gql(app.url, `{ me { via organization { id } } }`, {}, { headers: { cookie, origin: STRANGER } });
    expect(unlisted.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    expect(unlisted.headers.get('access-control-allow-origin')).toBe('*');
    expect(unlisted.headers.get('access-control-allow-credentials')).toBeNull();
    // REST too: a member row refuses the page, the cookie is not read.
    const rest = await call('PATCH', `${app.api}/agents/${openAgent}`, { body: { description: 'changed by a stranger page' }, headers: { cookie, origin: STRANGER } });
    expect(rest.status).toBe(401);
  });

  it("CSRF: a simple cross-site request with the cookie is still refused (Apollo's csrfPrevention, the JSON-only reader); JSON passes", async () => {
    const cookie = `ab_session=${org.session}`;
    const get = await fetch(`${app.url}/graphql?query=${encodeURIComponent('{ me { via } }')}`, { headers: { origin: DASHBOARD, cookie } });
    expect(get.status).toBe(400);
    expect(await get.text()).toMatch(/CSRF/);
    const form = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { origin: DASHBOARD, cookie, 'content-type': 'text/plain' }, body: JSON.stringify({ query: '{ me { via } }' }) });
    expect(form.status).toBe(415);
    const json = await gql(app.url, `{ agent(id: "${openAgent}") { name } }`, {}, { headers: { origin: STRANGER } });
    expect(json.data?.agent.name).toBe('Widget');
  });
});

describe('allowedOrigins refuses other pages (403, before any model call)', () => {
  it('anonymous: agent query (complete and streamed), get agent, over REST and GraphQL', async () => {
    const before = chatCalls();
    const complete = await call('POST', `${app.api}/agents/${shopAgent}/query`, { body: { query: 'Hi' }, headers: { origin: STRANGER } });
    expect(complete.status).toBe(403);
    expect(complete.body.error.code).toBe('FORBIDDEN');
    expect(complete.body.error.message).toContain(STRANGER);
    const streamed = await call('POST', `${app.api}/agents/${shopAgent}/query`, { body: { query: 'Hi', streaming: true }, headers: { origin: STRANGER } });
    expect(streamed.status).toBe(403);
    expect(streamed.headers.get('content-type')).toMatch(/application\/json/);
    expect((await call('GET', `${app.api}/agents/${shopAgent}`, { headers: { origin: STRANGER } })).status).toBe(403);
    const viaGraphql = await gql(app.url, `mutation { agentQuery(id: "${shopAgent}", input: { query: "Hi" }) { answer } }`, {}, { headers: { origin: STRANGER } });
    expect(viaGraphql.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect(chatCalls()).toBe(before);

    const listed = await call('POST', `${app.api}/agents/${shopAgent}/query`, { body: { query: 'From the shop' }, headers: { origin: SHOP } });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  });

  it("another organization's key is held to the list; the owner's key is not", async () => {
    const stranger = await call('POST', `${app.api}/agents/${shopAgent}/query`, { token: other.apiKey, body: { query: 'Hi' }, headers: { origin: STRANGER } });
    expect(stranger.status).toBe(403);
    const owner = await call('POST', `${app.api}/agents/${shopAgent}/query`, { token: org.apiKey, body: { query: 'Owner here' }, headers: { origin: STRANGER } });
    expect(owner.status, JSON.stringify(owner.body)).toBe(200);
    expect(owner.body.answer).toContain('Owner here');
  });

  it("a datastore's list: query, generate-link and update document", async () => {
    const headers = { origin: STRANGER };
    expect((await call('POST', `${app.api}/datastores/${shopStore}/query`, { body: { query: 'parcels' }, headers })).status).toBe(403);
    expect((await call('POST', `${app.api}/external/datastores/file-upload/generate-link/${shopStore}`, { body: { type: 'text/plain', fileName: 'a.txt' }, headers })).status).toBe(403);
    const update = await call('POST', `${app.api}/datastores/update/${shopStore}`, { body: { id: shopDocument, text: 'Defaced.' }, headers });
    expect(update.status).toBe(403);
    const text = await gql(app.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id: shopDocument }, { token: org.apiKey });
    expect(text.data.datasource.status).not.toBe('pending');
    expect((await call('POST', `${app.api}/datastores/${shopStore}/query`, { body: { query: 'parcels' }, headers: { origin: SHOP } })).status).toBe(200);
    expect((await call('POST', `${app.api}/datastores/${shopStore}/query`, { token: org.apiKey, body: { query: 'parcels' }, headers })).status).toBe(200);
  });
});

describe('allowedOrigins over GraphQL and REST', () => {
  it('is stored as browsers send origins, readable by the owner only, and cleared with []', async () => {
    const created = await createAgent({ allowedOrigins: ['HTTPS://Shop.Example:443/', 'http://localhost:8080', 'https://shop.example'] });
    expect(created.allowedOrigins).toEqual(['https://shop.example', 'http://localhost:8080']);
    const outsider = await gql(app.url, `{ agent(id: "${created.id}") { name allowedOrigins } }`, {}, { token: other.apiKey });
    expect(outsider.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    const cleared = await gql(app.url, `mutation { updateAgent(id: "${created.id}", input: { description: "", allowedOrigins: [] }) { allowedOrigins } }`, {}, { token: org.apiKey });
    expect(cleared.data.updateAgent.allowedOrigins).toEqual([]);
    const store = await gql(app.url, `mutation($id: ID!) { updateDatastore(id: $id, input: { allowedOrigins: ["http://127.0.0.1:3000"] }) { allowedOrigins } }`, { id: openStore }, { token: org.apiKey });
    expect(store.data.updateDatastore.allowedOrigins).toEqual(['http://127.0.0.1:3000']);
    await gql(app.url, `mutation($id: ID!) { updateDatastore(id: $id, input: { allowedOrigins: [] }) { id } }`, { id: openStore }, { token: org.apiKey });
  });

  it.each([
    [['https://shop.example/path'], /allowedOrigins\[0\] must be an origin/],
    [['*'], /leave allowedOrigins empty/],
    [['https://*.example.com'], /allowedOrigins\[0\] must be an origin/],
    [['shop.example'], /must be an origin/],
    [['ftp://shop.example'], /must be an origin/],
    [['https://user:pw@shop.example'], /must be an origin/],
    [Array.from({ length: 51 }, (_, i) => `https://s${i}.example`), /at most 50/],
  ])('GraphQL %j -> BAD_USER_INPUT naming allowedOrigins, nothing changed', async (allowedOrigins, message) => {
    const update = await gql(app.url, `mutation($id: ID!, $o: [String!]) { updateAgent(id: $id, input: { description: "x", allowedOrigins: $o }) { id } }`, { id: shopAgent, o: allowedOrigins }, { token: org.apiKey });
    expect(update.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(update.errors?.[0]?.extensions.details?.field).toBe('allowedOrigins');
    expect(update.errors?.[0]?.message).toMatch(message);
    const create = await gql(app.url, `mutation($o: [String!]) { createDatastore(input: { name: "x", allowedOrigins: $o }) { id } }`, { o: allowedOrigins }, { token: org.apiKey });
    expect(create.errors?.[0]?.extensions.details?.field).toBe('allowedOrigins');
    const read = await gql(app.url, `{ agent(id: "${shopAgent}") { description allowedOrigins } }`, {}, { token: org.apiKey });
    expect(read.data.agent.allowedOrigins).toEqual([SHOP]);
  });

  it('REST PATCH /agents/{id} sets it, and a bad one is 400 naming allowedOrigins', async () => {
    const { id } = await createAgent({});
    const bad = await call('PATCH', `${app.api}/agents/${id}`, { token: org.apiKey, body: { description: 'd', allowedOrigins: ['https://shop.example/checkout'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('BAD_USER_INPUT');
    expect(bad.body.error.details.field).toBe('allowedOrigins');
    const ok = await call('PATCH', `${app.api}/agents/${id}`, { token: org.apiKey, body: { description: 'd', allowedOrigins: ['https://shop.example'] } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.allowedOrigins).toEqual([SHOP]);
    // The change takes effect at once (the cached agent is forgotten).
    expect((await call('POST', `${app.api}/agents/${id}/query`, { body: { query: 'Hi' }, headers: { origin: STRANGER } })).status).toBe(403);
  });
});

describe('CORS_ORIGINS', () => {
  it('is read as exact origins; anything else stops the start with a message naming it', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://App.Example.com/, http://localhost:5173' }).corsOrigins).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example.com/dashboard' })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS must list origins/);
  });
});

describe('in a real browser (chromium), from a page of another origin', () => {
  let browser: Browser;
  let page: Page;
  let site: http.Server;
  let pageOrigin: string;

  beforeAll(async () => {
    site = http.createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Shop</title><p>A customer site.</p>'));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    page = await browser.newPage();
    await page.goto(`${pageOrigin}/`);
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
  });

  /** Runs `fetch` in the page; a CORS refusal comes back as `{ refused: message }`. */
  const inPage = (url: string, init: { method?: string; body?: unknown; credentials?: 'include' | 'omit'; token?: string }, read: 'json' | 'text' = 'json') =>
    page.evaluate(
      async ({ url, init, read }) => {
        try {
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (init.token) headers.authorization = `Bearer ${init.token}`;
          const res = await fetch(url, { method: init.method ?? 'POST', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), credentials: init.credentials ?? 'same-origin' });
          return { status: res.status, requestId: res.headers.get('x-request-id'), body: read === 'json' ? await res.json() : await res.text() };
        } catch (err) {
          return { refused: String(err) };
        }
      },
      { url, init, read },
    );

  it('calls a public agent (complete and streamed) and reads the answer and the exposed headers', async () => {
    const complete = await inPage(`${app.api}/agents/${openAgent}/query`, { body: { query: 'What time is it?' } });
    expect(complete).toMatchObject({ status: 200, body: { answer: expect.stringContaining('What time is it?') } });
    expect((complete as { requestId: string }).requestId).toBeTruthy();
    const streamed = await inPage(`${app.api}/agents/${openAgent}/query`, { body: { query: 'Stream to me', streaming: true } }, 'text');
    expect(streamed).toMatchObject({ status: 200 });
    const text = (streamed as { body: string }).body;
    expect(text).toContain('event: answer');
    expect(text).toContain('data: [DONE]');
  });

  it('a credentialed request from an origin outside CORS_ORIGINS is refused by the browser', async () => {
    const res = await inPage(`${app.api}/agents/${openAgent}/query`, { body: { query: 'With cookies' }, credentials: 'include' });
    expect(res).toMatchObject({ refused: expect.stringMatching(/Failed to fetch/) });
  });

  it("an agent whose allowedOrigins leave the page out refuses it; the owner's key still works there", async () => {
    const before = chatCalls();
    const res = await inPage(`${app.api}/agents/${shopAgent}/query`, { body: { query: 'Let me in' } });
    expect(res).toMatchObject({ refused: expect.stringMatching(/Failed to fetch/) });
    expect(chatCalls()).toBe(before);
    const owner = await inPage(`${app.api}/agents/${shopAgent}/query`, { body: { query: 'Owner from the page' }, token: org.apiKey });
    expect(owner).toMatchObject({ status: 200, body: { answer: expect.stringContaining('Owner from the page') } });
    const listedHere = await createAgent({ allowedOrigins: [pageOrigin] });
    expect(await inPage(`${app.api}/agents/${listedHere.id}/query`, { body: { query: 'Listed page' } })).toMatchObject({ status: 200 });
  });
});
