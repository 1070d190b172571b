/**
 * Every REST path of the foundation x every kind of caller x public/private agent:
 * the status and the documented JSON shape, and that a refused call changed nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, http, newOrganization, type HttpResult } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { routes } from '../rest/routes.ts';

let app: TestApp;
let own: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;

beforeAll(async () => {
  app = await startTestApp();
  own = await newOrganization(app.url, 'Own');
  other = await newOrganization(app.url, 'Other');
});
afterAll(() => app?.close());

type Caller = 'none' | 'invalid' | 'otherKey' | 'ownKey' | 'ownSession';
const callers: Caller[] = ['none', 'invalid', 'otherKey', 'ownKey', 'ownSession'];
const tokenOf = (c: Caller) =>
  ({ none: null, invalid: 'ak_not-a-real-key', otherKey: other.apiKey, ownKey: own.apiKey, ownSession: own.session })[c];

let seq = 0;
async function createAgent(visibility: 'public' | 'private') {
  const handle = `agent-${visibility}-${++seq}-${Date.now() % 100000}`;
  const res = await gql(
    app.url,
    `mutation($input: CreateAgentInput!) { createAgent(input: $input) { id } }`,
    {
      input: {
        name: `Agent ${seq}`,
        description: 'Original description',
        handle,
        visibility,
        modelName: 'model_4',
        temperature: 0.3,
        systemPrompt: 'You are helpful.',
        userPrompt: 'Answer: {query}',
      },
    },
    { token: own.apiKey },
  );
  expect(res.errors).toBeUndefined();
  return { id: res.data.createAgent.id as string, handle };
}

async function readAsOwner(id: string) {
  return http('GET', `${app.api}/agents/${id}`, { token: own.apiKey });
}

const AGENT_RECORD_KEYS = [
  'id',
  'name',
  'description',
  'modelName',
  'temperature',
  'visibility',
  'systemPrompt',
  'userPrompt',
  'promptType',
  'promptTemplate',
];

const getExpect: Record<'public' | 'private', Record<Caller, number>> = {
  public: { none: 200, invalid: 401, otherKey: 200, ownKey: 200, ownSession: 200 },
  private: { none: 404, invalid: 401, otherKey: 404, ownKey: 200, ownSession: 200 },
};
const changeExpect: Record<'public' | 'private', Record<Caller, number>> = {
  public: { none: 401, invalid: 401, otherKey: 403, ownKey: 200, ownSession: 200 },
  private: { none: 401, invalid: 401, otherKey: 404, ownKey: 200, ownSession: 200 },
};

const cases = (['public', 'private'] as const).flatMap((visibility) => callers.map((caller) => ({ visibility, caller })));

describe('GET /agents/{id} (endpoint 10)', () => {
  it.each(cases)('$visibility agent, caller $caller', async ({ visibility, caller }) => {
    const agent = await createAgent(visibility);
    const expected = getExpect[visibility][caller];
    for (const ref of [agent.id, `@${agent.handle}`]) {
      const res = await http('GET', `${app.api}/agents/${encodeURIComponent(ref)}`, { token: tokenOf(caller) });
      expect(res.status, `${ref}: ${JSON.stringify(res.body)}`).toBe(expected);
      if (expected === 200) {
        expect(res.body).toEqual({
          id: agent.id,
          handle: agent.handle,
          name: expect.any(String),
          description: 'Original description',
          visibility,
        });
      } else {
        expect(res.body.error.code).toBe({ 401: 'UNAUTHENTICATED', 404: 'NOT_FOUND' }[expected as 401 | 404]);
        expect(JSON.stringify(res.body)).not.toContain('Original description');
      }
    }
  });
});

describe('PATCH /agents/{id} (endpoint 11)', () => {
  it.each(cases)('$visibility agent, caller $caller', async ({ visibility, caller }) => {
    const agent = await createAgent(visibility);
    const res = await http('PATCH', `${app.api}/agents/${agent.id}`, {
      token: tokenOf(caller),
      body: { description: 'Changed', temperature: 0.9, name: 'Renamed' },
    });
    const expected = changeExpect[visibility][caller];
    expect(res.status, JSON.stringify(res.body)).toBe(expected);
    const after = await readAsOwner(agent.id);
    if (expected === 200) {
      expect(Object.keys(res.body)).toEqual(expect.arrayContaining(AGENT_RECORD_KEYS));
      expect(res.body).toMatchObject({
        id: agent.id,
        name: 'Renamed',
        description: 'Changed',
        temperature: 0.9,
        modelName: 'model_4',
        visibility,
        systemPrompt: 'You are helpful.',
        userPrompt: 'Answer: {query}',
        promptType: null,
        promptTemplate: null,
      });
      expect(after.body.description).toBe('Changed');
    } else {
      expect(res.body.error.code).toBe({ 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 404: 'NOT_FOUND' }[expected as 401]);
      expect(after.body.description).toBe('Original description');
    }
  });
});

describe('DELETE /agents/{id} (endpoint 12)', () => {
  it.each(cases)('$visibility agent, caller $caller', async ({ visibility, caller }) => {
    const agent = await createAgent(visibility);
    const res = await http('DELETE', `${app.api}/agents/${agent.id}`, { token: tokenOf(caller), body: {} });
    const expected = changeExpect[visibility][caller];
    expect(res.status, JSON.stringify(res.body)).toBe(expected);
    const after = await readAsOwner(agent.id);
    if (expected === 200) {
      expect(res.body).toMatchObject({ id: agent.id, description: 'Original description', visibility });
      expect(Object.keys(res.body)).toEqual(expect.arrayContaining(AGENT_RECORD_KEYS));
      expect(after.status).toBe(404);
    } else {
      expect(after.status).toBe(200);
    }
  });

  it('accepts a DELETE without a body', async () => {
    const agent = await createAgent('private');
    const res = await http('DELETE', `${app.api}/agents/${agent.id}`, { token: own.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(agent.id);
  });
});

describe('bad input over REST', () => {
  it('PATCH without description -> 400 naming the field, nothing changed', async () => {
    const agent = await createAgent('private');
    const res = await http('PATCH', `${app.api}/agents/${agent.id}`, { token: own.apiKey, body: { name: 'No description' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'BAD_USER_INPUT', details: { field: 'description' } });
    expect((await readAsOwner(agent.id)).body.name).not.toBe('No description');
  });

  it.each([
    [{ description: 'x', temperature: 1.5 }, 'temperature'],
    [{ description: 'x', temperature: -0.1 }, 'temperature'],
    [{ description: 'x', temperature: 'hot' }, 'temperature'],
    [{ description: 'x', visibility: 'secret' }, 'visibility'],
    [{ description: 'x', modelName: 'gpt-5' }, 'modelName'],
    [{ description: 'x', promptType: 'fancy' }, 'promptType'],
    [{ description: 42 }, 'description'],
    [{ description: 'x', unknownField: true }, 'unknownField'],
  ])('PATCH %j -> 400 on %s', async (body, field) => {
    const agent = await createAgent('private');
    const res = await http('PATCH', `${app.api}/agents/${agent.id}`, { token: own.apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('BAD_USER_INPUT');
    expect(res.body.error.details.field).toBe(field);
    expect(res.body.error.message).toContain(field);
    expect((await readAsOwner(agent.id)).body.description).toBe('Original description');
  });

  it('malformed JSON -> 400 JSON error', async () => {
    const agent = await createAgent('private');
    const res = await http('PATCH', `${app.api}/agents/${agent.id}`, { token: own.apiKey, rawBody: '{"description": "x"' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'BAD_USER_INPUT', message: 'The request body is not valid JSON.' });
  });

  it('a body over the limit -> 413', async () => {
    const agent = await createAgent('private');
    const res = await http('PATCH', `${app.api}/agents/${agent.id}`, {
      token: own.apiKey,
      body: { description: 'x'.repeat(1_100_000) },
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('unknown ids and handles -> 404', async () => {
    for (const id of ['not-an-id', '01a20258-07dc-7d9b-9f4d-0df70fdea414', '@nobody-here', '%40']) {
      const res = await http('GET', `${app.api}/agents/${id}`, { token: own.apiKey });
      expect(res.status, id).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('unknown route -> 404 JSON', async () => {
    const res = await http('GET', `${app.api}/nothing/here`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    const bad = await http('GET', `${app.url}/%E0%A4%A`);
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
  });

  it('a malformed Authorization header is an invalid credential', async () => {
    const agent = await createAgent('public');
    const res = await http('GET', `${app.api}/agents/${agent.id}`, { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    expect(res.status).toBe(401);
  });
});

describe('the route table', () => {
  it('has a row for every endpoint of interface.md (1 to 13), each answering on its path', async () => {
    const numbers = [...new Set(routes.map((r) => Number.parseInt(r.endpoint, 10)))].sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    for (const route of routes) {
      const path = route.path.replace(/:\w+/g, 'unknown-id');
      const res = await http(route.method, `${route.root ? app.url : app.api}${path}`, route.body === 'json' && route.method !== 'GET' ? { body: {} } : {});
      // Whatever the row decides (400, 401, 404 for the unknown id, 415 for a missing file), never "no route".
      expect(res.status, `${route.method} ${route.path}`).not.toBe(500);
      expect(res.body?.error?.message ?? '', `${route.method} ${route.path}`).not.toMatch(/^No route/);
    }
  });
});

describe('REST errors name REST fields', () => {
  let agentId: string;
  let storeId: string;
  let conversationId: string;

  beforeAll(async () => {
    agentId = (await createAgent('public')).id;
    storeId = (await gql(app.url, `mutation { createDatastore(input: { name: "Fields", visibility: public }) { id } }`, {}, { token: own.apiKey })).data.createDatastore.id;
    const answer = await http('POST', `${app.api}/agents/${agentId}/query`, { body: { query: 'hello there' } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    conversationId = answer.body.conversationId;
  });

  const post = (path: () => string, body: unknown) => () => http('POST', `${app.api}${path()}`, { token: own.apiKey, body });
  // [row, request, the REST field named, how the message goes on]
  const cases: [string, () => Promise<HttpResult>, string, RegExp][] = [
    ['4. datastore query {}', post(() => `/datastores/${storeId}/query`, {}), 'query', /^query is required\.$/],
    ['4. datastore query topK', post(() => `/datastores/${storeId}/query`, { query: 'x', topK: 'many' }), 'topK', /^topK must be a whole number\.$/],
    ['4. datastore query query type', post(() => `/datastores/${storeId}/query`, { query: 5 }), 'query', /^query must be a string\.$/],
    ['4. datastore query filters', post(() => `/datastores/${storeId}/query`, { query: 'x', filters: 'none' }), 'filters', /^filters must be a JSON object\.$/],
    ['4. datastore query unknown field', post(() => `/datastores/${storeId}/query`, { query: 'x', top_k: 3 }), 'top_k', /^top_k is not a known field\.$/],
    ['7. agent query {}', post(() => `/agents/${agentId}/query`, {}), 'query', /^query is required\.$/],
    ['7. agent query streamed {}', post(() => `/agents/${agentId}/query`, { streaming: true }), 'query', /^query is required\.$/],
    ['7. agent query temperature', post(() => `/agents/${agentId}/query`, { query: 'x', temperature: 'hot' }), 'temperature', /^temperature must be a number\.$/],
    ['7. agent query modelName', post(() => `/agents/${agentId}/query`, { query: 'x', modelName: 'gpt-9' }), 'modelName', /^modelName is not one of the accepted values\.$/],
    ['7. agent query streaming', post(() => `/agents/${agentId}/query`, { query: 'x', streaming: 'yes' }), 'streaming', /^streaming must be true or false\.$/],
    ['7. agent query filters.custom_ids', post(() => `/agents/${agentId}/query`, { query: 'x', filters: { custom_ids: [1.5] } }), 'filters.custom_ids[0]', /^filters\.custom_ids\[0\] must be a string\.$/],
    ['7. agent query no body', () => http('POST', `${app.api}/agents/${agentId}/query`), 'body', /^The request body must be a JSON object\.$/],
    ['8. universal {}', post(() => `/agents/${agentId}/universal`, {}), 'fileBuffer', /^fileBuffer is required\.$/],
    ['9. form chat {}', post(() => `/forms/${agentId}/chat`, {}), 'query', /^query is required\.$/],
    ['13. conversation limit=abc', () => http('GET', `${app.api}/conversations/${conversationId}?limit=abc`), 'limit', /^limit must be a whole number\.$/],
    ['13. conversation limit=0', () => http('GET', `${app.api}/conversations/${conversationId}?limit=0`), 'limit', /^limit must not be less than 1$/],
    ['13. conversation cursor=zzz', () => http('GET', `${app.api}/conversations/${conversationId}?cursor=zzz`), 'cursor', /^cursor is not a cursor returned by this API\.$/],
    ['1. generate link {}', post(() => `/external/datastores/file-upload/generate-link/${storeId}`, {}), 'type', /^type is required\.$/],
    ['2. process upload {}', post(() => `/external/datastores/file-upload/process/${storeId}`, {}), 'id', /^id is required\.$/],
    ['3. update document {}', post(() => `/external/datastores/update/${storeId}`, {}), 'id', /^id is required\.$/],
    ['6. create datasource custom_id', post(() => '/datasources', { datastoreId: 'x', type: 'web_page', name: 'n', custom_id: 5 }), 'custom_id', /^custom_id must be a string\.$/],
    ['11. update agent {}', () => http('PATCH', `${app.api}/agents/${agentId}`, { token: own.apiKey, body: {} }), 'description', /^description is required\.$/],
  ];

  it.each(cases)('%s', async (_name, send, field, message) => {
    const res = await send();
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('BAD_USER_INPUT');
    expect(res.body.error.details.field).toBe(field);
    expect(res.body.error.message).toMatch(message);
    // Nothing of GraphQL: no variable, no type name, no GraphQL argument.
    expect(res.body.error.message).not.toMatch(/\$|Variable|Input\b|String!|\bfirst\b|\bafter\b|GraphQL/);
  });

  it('the complete agent answer carries the same fields as the streamed endpoint_response, and the answer', async () => {
    const complete = await http('POST', `${app.api}/agents/${agentId}/query`, { body: { query: 'hello again' } });
    expect(complete.status).toBe(200);
    expect(Object.keys(complete.body).sort()).toEqual(['answer', 'conversationId', 'messageId', 'sources', 'visitorId']);
    expect(complete.body.messageId).toEqual(expect.any(String));
    const streamed = await fetch(`${app.api}/agents/${agentId}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'hello again', streaming: true }) });
    const text = await streamed.text();
    const response = JSON.parse(
      [...text.matchAll(/event: endpoint_response\ndata: (.*)\n/g)].map((m) => m[1]).join(''),
    );
    expect(Object.keys(response).sort()).toEqual(['conversationId', 'messageId', 'sources', 'visitorId']);
  });
});
