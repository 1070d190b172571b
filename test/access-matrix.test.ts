/**
 * The access rules, endpoint by endpoint: every REST endpoint of interface.md (1 to 12) x every
 * kind of caller x a public and a private resource, asserting the status and that a refused
 * change changed nothing; then the same rules over GraphQL in a smaller table, and what scoped,
 * read-only and expiring keys do beyond the table. One app, seeded once; no model is called.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http, newOrganization, type HttpResult } from './support/client.ts';
import { settled, sql, upload } from './support/ingest.ts';

type Caller = 'none' | 'invalid' | 'otherKey' | 'ownKey' | 'ownSession' | 'scopedIn' | 'scopedOut' | 'readOnly';
type Vis = 'public' | 'private';
const CALLERS: Caller[] = ['none', 'invalid', 'otherKey', 'ownKey', 'ownSession', 'scopedIn', 'scopedOut', 'readOnly'];
const VISIBILITIES: Vis[] = ['public', 'private'];

let app: TestApp;
let own: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
const keys = {} as Record<'scopedIn' | 'scopedOut' | 'readOnly', string>;
const agent = {} as Record<Vis, string>;
const store = {} as Record<Vis, string>;
const textDoc = {} as Record<Vis, string>;
const form = {} as Record<Vis, string>;
/** One agent per row of DELETE, and one uploaded file per row of process: each call has its own. */
const doomed = { public: {}, private: {} } as Record<Vis, Record<Caller, string>>;
const uploaded = { public: {}, private: {} } as Record<Vis, Record<Caller, string>>;
let decoyAgent: string;
let decoyStore: string;

function tokenOf(caller: Caller): string | null {
  switch (caller) {
    case 'none': return null;
    case 'invalid': return 'ak_not-a-real-key';
    case 'otherKey': return other.apiKey;
    case 'ownKey': return own.apiKey;
    case 'ownSession': return own.session;
    default: return keys[caller];
  }
}

async function ok(res: Promise<{ data?: any; errors?: unknown }>): Promise<any> {
  const { data, errors } = await res;
  if (!data || errors) throw new Error(JSON.stringify(errors));
  return data;
}

const asOwner = (query: string, variables: Record<string, unknown> = {}) => ok(gql(app.url, query, variables, { token: own.session }));

async function createAgent(visibility: Vis, datastoreIds: string[] = []): Promise<string> {
  const data = await asOwner(`mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'A', description: 'original', visibility, datastoreIds } });
  return data.createAgent.id;
}

async function createStore(visibility: Vis): Promise<string> {
  return (await asOwner(`mutation($i: CreateDatastoreInput!) { createDatastore(input: $i) { id } }`, { i: { name: 'S', visibility } })).createDatastore.id;
}

async function createText(datastoreId: string, text: string): Promise<string> {
  const data = await asOwner(`mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id } }`, { i: { datastoreId, type: 'text', name: 'doc', text } });
  return data.createDatasource.id;
}

async function createKey(input: Record<string, unknown>): Promise<string> {
  return (await asOwner(`mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }`, { i: { name: 'k', ...input } })).createApiKey.key;
}

/** A file datasource uploaded through its link, waiting to be processed (endpoint 2). */
async function uploadedFile(datastoreId: string): Promise<string> {
  const link = await http('POST', `${app.api}/external/datastores/file-upload/generate-link/${datastoreId}`, { token: own.apiKey, body: { type: 'text/plain', fileName: 'n.txt' } });
  expect(link.status).toBe(200);
  const put = await fetch(link.body.link, { method: 'PUT', body: 'Some notes.', headers: { 'content-type': 'text/plain' } });
  expect(put.status).toBe(200);
  return link.body.id;
}

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_VISITOR_PER_MINUTE: '100000', RATE_LIMIT_IP_PER_MINUTE: '1000000' });
  [own, other] = await Promise.all([newOrganization(app.url, 'Own'), newOrganization(app.url, 'Other')]);
  for (const vis of VISIBILITIES) {
    store[vis] = await createStore(vis);
    textDoc[vis] = await createText(store[vis], 'The warranty lasts seven years.');
    agent[vis] = await createAgent(vis, [store[vis]]);
    const schema = { type: 'object', properties: { name: { type: 'string', title: 'Your name' } }, required: ['name'] };
    form[vis] = (await asOwner(`mutation($i: CreateFormInput!) { createForm(input: $i) { form { id } } }`, { i: { name: 'F', schema, published: vis === 'public' } })).createForm.form.id;
    for (const caller of CALLERS) {
      doomed[vis][caller] = await createAgent(vis);
      uploaded[vis][caller] = await uploadedFile(store[vis]);
    }
  }
  decoyAgent = await createAgent('private');
  decoyStore = await createStore('private');
  keys.scopedIn = await createKey({ agentIds: [...VISIBILITIES.flatMap((v) => [agent[v], ...Object.values(doomed[v])])], datastoreIds: [store.public, store.private] });
  keys.scopedOut = await createKey({ agentIds: [decoyAgent], datastoreIds: [decoyStore] });
  keys.readOnly = await createKey({ readOnly: true });
}, 120_000);
afterAll(() => app?.close());

/**
 * What each kind of endpoint answers, by caller and visibility:
 * - use: bearer-documented reads (datastore query, agent query, universal): a caller without
 *   credentials is asked for them on a private resource.
 * - get: get agent (10): a private agent is not found for a caller without credentials.
 * - publicWrite: generate-link and update document, open to anyone on a public datastore.
 * - memberWrite: process, upload, create datasource: members of the organization only.
 * - change: update and delete agent.
 * - form: form chat; "public" is a published form, "private" an unpublished one.
 */
type Rule = 'use' | 'get' | 'publicWrite' | 'memberWrite' | 'change' | 'form';
function expected(rule: Rule, vis: Vis, caller: Caller): number {
  if (caller === 'invalid') return 401;
  if (rule === 'form') return vis === 'public' ? 200 : 404;
  const pub = vis === 'public';
  const write = rule === 'publicWrite' || rule === 'memberWrite' || rule === 'change';
  switch (caller) {
    case 'none':
      if (rule === 'get') return pub ? 200 : 404;
      if (rule === 'use' || rule === 'publicWrite') return pub ? 200 : 401;
      return 401;
    case 'otherKey':
      if (rule === 'use' || rule === 'get' || rule === 'publicWrite') return pub ? 200 : 404;
      if (rule === 'change') return pub ? 403 : 404;
      return 404;
    case 'scopedOut':
      return 404;
    case 'readOnly':
      return write ? 403 : 200;
    default:
      return 200;
  }
}

interface Row {
  endpoint: string;
  rule: Rule;
  call: (token: string | null, vis: Vis, caller: Caller) => Promise<HttpResult>;
  /** What a refused call must leave as it was. */
  state?: (vis: Vis, caller: Caller) => Promise<unknown>;
}

const post = (path: string, token: string | null, body: unknown) => http('POST', `${app.api}${path}`, { token, body });
const countIn = async (vis: Vis) => (await sql(app, 'select count(*)::int as n from datasources where datastore_id = ?', [store[vis]]))[0]!.n;

const ROWS: Row[] = [
  {
    endpoint: '1. generate upload link',
    rule: 'publicWrite',
    call: (token, vis) => post(`/external/datastores/file-upload/generate-link/${store[vis]}`, token, { type: 'text/plain', fileName: 'x.txt' }),
    state: countIn,
  },
  {
    endpoint: '2. process upload',
    rule: 'memberWrite',
    call: (token, vis, caller) => post(`/external/datastores/file-upload/process/${store[vis]}`, token, { id: uploaded[vis][caller] }),
    state: (vis, caller) => sql(app, 'select status, updated_at from datasources where id = ?', [uploaded[vis][caller]]),
  },
  {
    endpoint: '3. update document',
    rule: 'publicWrite',
    call: (token, vis, caller) => post(`/external/datastores/update/${store[vis]}`, token, { id: textDoc[vis], text: `Rewritten by ${caller}.` }),
    state: (vis) => sql(app, 'select content from datasources where id = ?', [textDoc[vis]]),
  },
  { endpoint: '4. datastore query', rule: 'use', call: (token, vis) => post(`/datastores/${store[vis]}/query`, token, { query: 'warranty', topK: 1 }) },
  {
    endpoint: '5. direct file upload',
    rule: 'memberWrite',
    call: (token, vis) => upload(app, token, store[vis], { name: 'd.txt', type: 'text/plain', data: 'Direct.' }) as Promise<HttpResult>,
    state: countIn,
  },
  {
    endpoint: '6. create datasource (text, JSON)',
    rule: 'memberWrite',
    call: (token, vis) => post('/datasources', token, { datastoreId: store[vis], type: 'text', name: 'n', text: 'Created.' }),
    state: countIn,
  },
  {
    endpoint: '6. create datasource (file, multipart)',
    rule: 'memberWrite',
    call: (token, vis) => upload(app, token, store[vis], { name: 'c.txt', type: 'text/plain', data: 'Created.' }, { path: '/datasources', fields: { type: 'file', datastoreId: store[vis] } }) as Promise<HttpResult>,
    state: countIn,
  },
  { endpoint: '7. agent query', rule: 'use', call: (token, vis) => post(`/agents/${agent[vis]}/query`, token, { query: 'How long is the warranty?' }) },
  {
    endpoint: '8. universal processor',
    rule: 'use',
    call: (token, vis) => post(`/agents/${agent[vis]}/universal`, token, { fileBuffer: Buffer.from('Hello.').toString('base64'), fileType: 'txt' }),
  },
  { endpoint: '9. form chat', rule: 'form', call: (token, vis) => post(`/forms/${form[vis]}/chat`, token, { query: 'Ada' }) },
  { endpoint: '10. get agent', rule: 'get', call: (token, vis) => http('GET', `${app.api}/agents/${agent[vis]}`, { token }) },
  {
    endpoint: '11. update agent',
    rule: 'change',
    call: (token, vis, caller) => http('PATCH', `${app.api}/agents/${agent[vis]}`, { token, body: { description: `changed by ${caller}` } }),
    state: (vis) => sql(app, 'select description from agents where id = ?', [agent[vis]]),
  },
  {
    endpoint: '12. delete agent',
    rule: 'change',
    call: (token, vis, caller) => http('DELETE', `${app.api}/agents/${doomed[vis][caller]}`, { token, body: {} }),
    state: (vis, caller) => sql(app, 'select id from agents where id = ?', [doomed[vis][caller]]),
  },
];

const CODES: Record<number, string> = { 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 404: 'NOT_FOUND' };

describe('REST: endpoint x caller x visibility', () => {
  const cases = ROWS.flatMap((row) => VISIBILITIES.flatMap((vis) => CALLERS.map((caller) => ({ name: `${row.endpoint}, ${vis}, ${caller}`, row, vis, caller }))));
  it.each(cases)('$name', async ({ row, vis, caller }) => {
    const want = expected(row.rule, vis, caller);
    const before = await row.state?.(vis, caller);
    const res = await row.call(tokenOf(caller), vis, caller);
    expect(res.status, JSON.stringify(res.body)).toBe(want);
    if (want !== 200) {
      expect(res.body.error.code).toBe(CODES[want]);
      if (row.state) expect(await row.state(vis, caller)).toEqual(before);
    }
  });

  it('an unknown id asks a caller without credentials for them (1-8, 11, 12) and is 404 to a member', async () => {
    const unknown = '01a20258-07dc-7d9b-9f4d-0df70fdea414';
    const calls: [string, (token: string | null) => Promise<HttpResult>][] = [
      ['1', (t) => post(`/external/datastores/file-upload/generate-link/${unknown}`, t, { type: 'text/plain' })],
      ['2', (t) => post(`/external/datastores/file-upload/process/${unknown}`, t, { id: unknown })],
      ['3', (t) => post(`/external/datastores/update/${unknown}`, t, { id: unknown, text: 'x' })],
      ['4', (t) => post(`/datastores/${unknown}/query`, t, { query: 'x' })],
      ['5', (t) => upload(app, t, unknown, { name: 'a.txt', type: 'text/plain', data: 'a' }) as Promise<HttpResult>],
      ['6', (t) => post('/datasources', t, { datastoreId: unknown, type: 'text', name: 'n', text: 'x' })],
      ['7', (t) => post(`/agents/${unknown}/query`, t, { query: 'x' })],
      ['7 streamed', (t) => post(`/agents/${unknown}/query`, t, { query: 'x', streaming: true })],
      ['8', (t) => post(`/agents/${unknown}/universal`, t, { fileBuffer: 'aGk=', fileType: 'txt' })],
      ['11', (t) => http('PATCH', `${app.api}/agents/${unknown}`, { token: t, body: { description: 'x' } })],
      ['12', (t) => http('DELETE', `${app.api}/agents/${unknown}`, { token: t, body: {} })],
    ];
    for (const [n, call] of calls) {
      const anonymous = await call(null);
      expect(anonymous.status, `${n}: ${JSON.stringify(anonymous.body)}`).toBe(401);
      expect(anonymous.body.error.code).toBe('UNAUTHENTICATED');
      expect((await call(own.apiKey)).status, n).toBe(404);
    }
  });

  it('a streamed query of a private agent without credentials is a 401 JSON error, before any stream', async () => {
    const res = await post(`/agents/${agent.private}/query`, null, { query: 'x', streaming: true });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect((await post(`/agents/${agent.private}/query`, keys.scopedOut, { query: 'x', streaming: true })).status).toBe(404);
  });
});

describe('GraphQL: the same rules', () => {
  const gqlCallers: Caller[] = ['none', 'invalid', 'otherKey', 'ownKey', 'scopedIn', 'scopedOut', 'readOnly'];
  const ops: { name: string; rule: Rule; query: string; vars: (vis: Vis) => Record<string, unknown> }[] = [
    { name: 'agent', rule: 'get', query: `query($id: ID!) { agent(id: $id) { id } }`, vars: (vis) => ({ id: agent[vis] }) },
    { name: 'datastoreQuery', rule: 'use', query: `query($id: ID!) { datastoreQuery(id: $id, input: { query: "warranty", topK: 1 }) { text } }`, vars: (vis) => ({ id: store[vis] }) },
    { name: 'agentQuery', rule: 'use', query: `mutation($id: ID!) { agentQuery(id: $id, input: { query: "warranty?" }) { answer } }`, vars: (vis) => ({ id: agent[vis] }) },
    { name: 'updateAgent', rule: 'change', query: `mutation($id: ID!) { updateAgent(id: $id, input: { description: "via graphql" }) { id } }`, vars: (vis) => ({ id: agent[vis] }) },
    { name: 'createUploadLink', rule: 'publicWrite', query: `mutation($id: ID!) { createUploadLink(datastoreId: $id, input: { type: "text/plain" }) { id } }`, vars: (vis) => ({ id: store[vis] }) },
  ];
  const cases = ops.flatMap((op) => VISIBILITIES.flatMap((vis) => gqlCallers.map((caller) => ({ name: `${op.name}, ${vis}, ${caller}`, op, vis, caller }))));
  it.each(cases)('$name', async ({ op, vis, caller }) => {
    const want = expected(op.rule, vis, caller);
    const res = await gql(app.url, op.query, op.vars(vis), { token: tokenOf(caller) });
    if (want === 200) expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    else expect(res.errors?.[0]?.extensions.code, JSON.stringify(res.errors)).toBe(CODES[want]);
  });

  it('lists show a scoped key only its listed agents and datastores', async () => {
    const list = async (token: string, what: 'agents' | 'datastores') =>
      ((await ok(gql(app.url, `{ ${what}(first: 100) { nodes { id } } }`, {}, { token })))[what].nodes as { id: string }[]).map((n) => n.id).sort();
    expect(await list(keys.scopedOut, 'agents')).toEqual([decoyAgent]);
    expect(await list(keys.scopedOut, 'datastores')).toEqual([decoyStore]);
    expect(await list(keys.scopedIn, 'datastores')).toEqual([store.public, store.private].sort());
    const all = await list(own.apiKey, 'agents');
    expect(all).toContain(decoyAgent);
    expect(await list(keys.scopedIn, 'agents')).not.toContain(decoyAgent);
    // A later agent is outside every list.
    const later = await createAgent('public');
    expect(await list(keys.scopedIn, 'agents')).not.toContain(later);
  });

  it('an agent read by a key limited to datastores does not name the others it is linked to', async () => {
    const res = await ok(gql(app.url, `query($id: ID!) { agent(id: $id) { datastoreIds } }`, { id: agent.private }, { token: keys.scopedIn }));
    expect(res.agent.datastoreIds).toEqual([store.private]);
    const key = await createKey({ datastoreIds: [] });
    expect((await ok(gql(app.url, `query($id: ID!) { agent(id: $id) { datastoreIds } }`, { id: agent.private }, { token: key }))).agent.datastoreIds).toEqual([]);
    // An empty list is no datastore at all, not every datastore.
    expect((await ok(gql(app.url, `{ datastores(first: 100) { nodes { id } } }`, {}, { token: key }))).datastores.nodes).toEqual([]);
  });

  it('creating is refused to a read-only key and to a key limited to that kind; keys are managed by signed-in admins only', async () => {
    const createAgentOp = `mutation { createAgent(input: { name: "New" }) { id } }`;
    const createStoreOp = `mutation { createDatastore(input: { name: "New" }) { id } }`;
    const createFormOp = `mutation { createForm(input: { name: "F", schema: { type: "object", properties: { a: { type: "string" } } } }) { form { id } } }`;
    const countAgents = async () => (await sql(app, 'select count(*)::int as n from agents where organization_id = ?', [own.organizationId]))[0]!.n;
    const before = await countAgents();
    for (const [token, op] of [[keys.readOnly, createAgentOp], [keys.readOnly, createStoreOp], [keys.readOnly, createFormOp], [keys.scopedIn, createAgentOp], [keys.scopedIn, createStoreOp]] as const) {
      const res = await gql(app.url, op, {}, { token });
      expect(res.errors?.[0]?.extensions.code, op).toBe('FORBIDDEN');
    }
    expect(await countAgents()).toBe(before);
    // A key limited to agents may still create datastores (no list of datastores: no limit of that kind), and forms.
    const agentsOnly = await createKey({ agentIds: [agent.public] });
    expect((await gql(app.url, createStoreOp, {}, { token: agentsOnly })).errors).toBeUndefined();
    expect((await gql(app.url, createFormOp, {}, { token: agentsOnly })).errors).toBeUndefined();
    for (const token of [keys.readOnly, keys.scopedIn, own.apiKey]) {
      const res = await gql(app.url, `mutation { createApiKey(input: { name: "more" }) { key } }`, {}, { token });
      expect(res.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    }
  });
});

describe('scoped, read-only and expiring keys', () => {
  const KEY_FIELDS = `id name agentIds datastoreIds readOnly expiresAt lastUsedAt revokedAt`;

  it('createApiKey checks its lists and expiry (400 naming the field, nothing created); apiKeys shows the limits', async () => {
    const count = async () => (await asOwner(`{ apiKeys { id } }`)).apiKeys.length;
    const before = await count();
    const theirs = (await ok(gql(app.url, `mutation { createAgent(input: { name: "Theirs" }) { id } }`, {}, { token: other.apiKey }))).createAgent.id;
    const nowhere = '01a20258-07dc-7d9b-9f4d-0df70fdea414';
    const bad: [Record<string, unknown>, string][] = [
      [{ expiresAt: new Date(Date.now() - 60_000).toISOString() }, 'expiresAt'],
      [{ agentIds: [theirs] }, 'agentIds'],
      [{ agentIds: [nowhere] }, 'agentIds'],
      [{ agentIds: ['not-an-id'] }, 'agentIds'],
      [{ datastoreIds: [agent.public] }, 'datastoreIds'],
      [{ agentIds: [agent.public], datastoreIds: [decoyStore, nowhere] }, 'datastoreIds'],
    ];
    for (const [input, field] of bad) {
      const res = await gql(app.url, `mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }`, { i: { name: 'bad', ...input } }, { token: own.session });
      expect(res.errors?.[0]?.extensions.code, JSON.stringify(input)).toBe('BAD_USER_INPUT');
      expect(res.errors?.[0]?.extensions.details?.field).toBe(field);
      expect(res.errors?.[0]?.message).toContain(field);
    }
    // Another organization's agent is reported as an id that exists nowhere.
    const message = async (id: string) => (await gql(app.url, `mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }`, { i: { name: 'bad', agentIds: [id] } }, { token: own.session })).errors?.[0]?.message;
    expect((await message(theirs))?.replace(theirs, 'ID')).toBe((await message(nowhere))?.replace(nowhere, 'ID'));
    expect(await count()).toBe(before);

    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await asOwner(`mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key apiKey { ${KEY_FIELDS} } } }`, {
      i: { name: 'widget', agentIds: [agent.public, agent.public], datastoreIds: [], readOnly: true, expiresAt },
    });
    expect(created.createApiKey.apiKey).toMatchObject({ name: 'widget', agentIds: [agent.public], datastoreIds: [], readOnly: true, expiresAt, lastUsedAt: null });
    expect((await post(`/agents/${agent.public}/query`, created.createApiKey.key, { query: 'hi' })).status).toBe(200);
    const listed = (await asOwner(`{ apiKeys { ${KEY_FIELDS} } }`)).apiKeys;
    expect(listed.find((k: { id: string }) => k.id === created.createApiKey.apiKey.id)).toMatchObject({ agentIds: [agent.public], datastoreIds: [], readOnly: true, expiresAt, lastUsedAt: expect.any(String) });
    // Keys made without limits (and every key made before them) have full access.
    expect(listed.find((k: { name: string }) => k.name === 'tests')).toMatchObject({ agentIds: null, datastoreIds: null, readOnly: false, expiresAt: null });
  });

  it('an expired key is 401 (the cached key expires with it)', async () => {
    const key = await createKey({ expiresAt: new Date(Date.now() + 1500).toISOString() });
    expect((await http('GET', `${app.api}/agents/${agent.private}`, { token: key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1700));
    const res = await http('GET', `${app.api}/agents/${agent.private}`, { token: key });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHENTICATED');
  });

  it('a revoked scoped key stops at once', async () => {
    const key = await createKey({ agentIds: [agent.private], readOnly: true });
    expect((await http('GET', `${app.api}/agents/${agent.private}`, { token: key })).status).toBe(200);
    const id = (await asOwner(`{ apiKeys { id name agentIds } }`)).apiKeys.find((k: { agentIds: string[] | null }) => k.agentIds?.[0] === agent.private && k.agentIds.length === 1).id;
    await asOwner(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id });
    expect((await http('GET', `${app.api}/agents/${agent.private}`, { token: key })).status).toBe(401);
  });

  it('an agent in scope answers from its datastores though the key cannot read them', async () => {
    const kb = await createStore('private');
    const doc = await createText(kb, 'Parcels to Iceland take nine days.');
    const helper = await createAgent('private', [kb]);
    expect((await settled(app, own.apiKey, doc)).status).toBe('synched');
    const key = await createKey({ agentIds: [helper], datastoreIds: [] });
    const answer = await post(`/agents/${helper}/query`, key, { query: 'How long to Iceland?' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.sources.map((s: { text: string }) => s.text).join(' ')).toContain('nine days');
    expect((await post(`/datastores/${kb}/query`, key, { query: 'Iceland' })).status).toBe(404);
  }, 60_000);

  it("a deleted agent stays in a key's list, matching nothing", async () => {
    const gone = await createAgent('public');
    const key = await createKey({ agentIds: [gone] });
    await asOwner(`mutation($id: ID!) { deleteAgent(id: $id) { id } }`, { id: gone });
    expect((await http('GET', `${app.api}/agents/${gone}`, { token: key })).status).toBe(404);
    expect((await ok(gql(app.url, `{ agents(first: 10) { nodes { id } } }`, {}, { token: key }))).agents.nodes).toEqual([]);
    const listed = (await asOwner(`{ apiKeys { agentIds } }`)).apiKeys.map((k: { agentIds: string[] | null }) => k.agentIds);
    expect(listed).toContainEqual([gone]);
  });
});
