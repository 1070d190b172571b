/**
 * The MCP server (/mcp, docs/mcp.md) through the SDK's own client over Streamable HTTP:
 * initialize, list the tools, call each one, keys and their refusals. The agents answer through
 * the local OpenAI-compatible test server, the only stand-in.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { waitFor } from './support/wait.ts';

let model: OpenAiTestServer;
let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
let publicStore: string;
let privateStore: string;
let publicAgent: string;
let privateAgent: string;
const ids: Record<string, string> = {};
const clients: Client[] = [];

async function connect(key: string | null) {
  const client = new Client({ name: 'test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;

beforeAll(async () => {
  model = await startOpenAiTestServer();
  app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key', RATE_LIMIT_VISITOR_PER_MINUTE: '1000' });
  org = await newOrganization(app.url, 'MCP');
  other = await newOrganization(app.url, 'Other');
  const store = async (visibility: string, name: string) => (await gql(app.url, `mutation($v: Visibility!, $n: String!) { createDatastore(input: { name: $n, visibility: $v }) { id } }`, { v: visibility, n: name }, { token: org.apiKey })).data.createDatastore.id as string;
  publicStore = await store('public', 'Handbook');
  privateStore = await store('private', 'Secrets');
  for (const [name, text, datastoreId, custom_id] of [
    ['refunds', 'Customers can return any purchase within thirty days and receive their money back in full.', publicStore, 'a'],
    ['hours', 'The support desk is staffed from nine in the morning until five in the evening, Monday to Friday.', publicStore, 'b'],
    ['vault', 'The vault code is kept in the safe behind the painting.', privateStore, 'a'],
  ] as const) {
    ids[name] = (await http('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId, type: 'text', name, text, custom_id } })).body.id;
  }
  for (const id of Object.values(ids)) {
    await waitFor(async () => (await gql(app.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id }, { token: org.apiKey })).data?.datasource.status === 'synched', 60_000, `datasource ${id}`);
  }
  const agent = async (visibility: string, handle: string, datastoreIds: string[]) =>
    (await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: `Agent ${handle}`, description: 'Answers questions.', handle, visibility, datastoreIds } }, { token: org.apiKey })).data.createAgent.id as string;
  publicAgent = await agent('public', 'front-desk', [publicStore]);
  privateAgent = await agent('private', 'back-office', [privateStore]);
}, 180_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await app?.close();
  await model?.close();
});

describe('MCP server at /mcp', () => {
  it('initializes and lists the four tools, each with a description and a JSON Schema for its input', async () => {
    const client = await connect(org.apiKey);
    expect(client.getServerVersion()?.name).toBe('agentbase');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['ask_agent', 'list_agents', 'list_datastores', 'search_datastore']);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(30);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    const ask = tools.find((t) => t.name === 'ask_agent')!;
    expect(ask.inputSchema.required?.sort()).toEqual(['agent', 'question']);
    expect(Object.keys(ask.inputSchema.properties!).sort()).toEqual(['agent', 'conversation_id', 'question']);
    const search = tools.find((t) => t.name === 'search_datastore')!;
    expect(Object.keys(search.inputSchema.properties!).sort()).toEqual(['datastore', 'filters', 'minScore', 'query', 'topK']);
  });

  it('list_agents and list_datastores: the key\'s organization, as text and structuredContent', async () => {
    const client = await connect(org.apiKey);
    const agents = await call(client, 'list_agents');
    expect(agents.isError).toBeFalsy();
    const listed = (agents.structuredContent as { agents: { id: string; handle: string }[] }).agents;
    expect(listed.map((a) => a.handle).sort()).toEqual(['@back-office', '@front-desk']);
    expect(JSON.parse(text(agents))).toEqual(agents.structuredContent);
    const stores = await call(client, 'list_datastores');
    expect((stores.structuredContent as { datastores: { id: string }[] }).datastores.map((d) => d.id).sort()).toEqual([publicStore, privateStore].sort());
    // Another organization sees its own (none).
    const theirs = await call(await connect(other.apiKey), 'list_agents');
    expect(theirs.structuredContent).toEqual({ agents: [] });
  });

  it('ask_agent answers with its sources and a conversation that a follow-up continues', async () => {
    model.setChatReply((body) => `answer after ${body.messages.length} messages`);
    const client = await connect(org.apiKey);
    const first = await call(client, 'ask_agent', { agent: '@front-desk', question: 'Can I get my money back?' });
    expect(first.isError).toBeFalsy();
    const answer = first.structuredContent as { answer: string; conversation_id: string; sources: { datasource_id: string; score: number }[] };
    expect(answer.answer).toBe('answer after 2 messages');
    expect(answer.sources[0]!.datasource_id).toBe(ids.refunds);
    expect(text(first)).toMatch(/^answer after 2 messages\n\nSources:\n\[1\] refunds/);
    const next = await call(client, 'ask_agent', { agent: publicAgent, question: 'And when are you open?', conversation_id: answer.conversation_id });
    expect((next.structuredContent as { answer: string; conversation_id: string }).answer).toBe('answer after 4 messages');
    expect((next.structuredContent as { conversation_id: string }).conversation_id).toBe(answer.conversation_id);
    const stored = await http('GET', `${app.api}/conversations/${answer.conversation_id}`);
    expect(stored.body.messages).toHaveLength(4);
  });

  it('search_datastore returns the fragments with scores and sources, honouring topK and filters', async () => {
    const client = await connect(org.apiKey);
    const found = await call(client, 'search_datastore', { datastore: publicStore, query: 'refund of a purchase', topK: 1 });
    const fragments = (found.structuredContent as { fragments: { datasource_id: string; score: number; source: string; text: string }[] }).fragments;
    expect(fragments).toHaveLength(1);
    expect(fragments[0]).toMatchObject({ datasource_id: ids.refunds, source: 'refunds' });
    expect(fragments[0]!.score).toBeGreaterThan(0);
    const filtered = await call(client, 'search_datastore', { datastore: publicStore, query: 'refund of a purchase', filters: { custom_ids: ['b'] } });
    expect((filtered.structuredContent as { fragments: { datasource_id: string }[] }).fragments.map((f) => f.datasource_id)).toEqual([ids.hours]);
    // minScore cuts as REST's does: above the best fragment's score, nothing is left.
    const best = fragments[0]!.score;
    const cut = await call(client, 'search_datastore', { datastore: publicStore, query: 'refund of a purchase', minScore: Math.min(1, best + 0.001) });
    expect((cut.structuredContent as { fragments: unknown[] }).fragments).toEqual([]);
    const kept = await call(client, 'search_datastore', { datastore: publicStore, query: 'refund of a purchase', minScore: best });
    expect((kept.structuredContent as { fragments: { datasource_id: string }[] }).fragments[0]!.datasource_id).toBe(ids.refunds);
  });

  it('without a key: public agents and datastores work; private ones are a tool error (credentials needed) that reveals nothing', async () => {
    model.setChatReply(() => 'public answer');
    const client = await connect(null);
    expect((await call(client, 'ask_agent', { agent: '@front-desk', question: 'hi' })).structuredContent).toMatchObject({ answer: 'public answer' });
    expect((await call(client, 'search_datastore', { datastore: publicStore, query: 'refund' })).isError).toBeFalsy();
    const unknown = await call(client, 'ask_agent', { agent: '@no-such-agent', question: 'hi' });
    const hidden = await call(client, 'ask_agent', { agent: privateAgent, question: 'hi' });
    expect(unknown.isError).toBe(true);
    expect(hidden.isError).toBe(true);
    // Without a key both ask for credentials alike (interface.md's 401), revealing nothing.
    expect(text(hidden)).toBe(text(unknown));
    expect(text(hidden)).toMatch(/^UNAUTHENTICATED/);
    expect(hidden.structuredContent).toBeUndefined();
    const store = await call(client, 'search_datastore', { datastore: privateStore, query: 'vault' });
    expect(store.isError).toBe(true);
    expect(text(store)).not.toContain('vault');
    // Listing needs a key.
    expect(text(await call(client, 'list_agents'))).toMatch(/^UNAUTHENTICATED/);
    // Another organization's key is an outsider: a private agent is as unknown to it as one that does not exist.
    const stranger = await connect(other.apiKey);
    const strangerUnknown = text(await call(stranger, 'ask_agent', { agent: '@no-such-agent', question: 'hi' }));
    expect(strangerUnknown).toMatch(/^NOT_FOUND/);
    expect(text(await call(stranger, 'ask_agent', { agent: privateAgent, question: 'hi' }))).toBe(strangerUnknown);
  });

  it('an invalid key is refused with 401 at connect', async () => {
    const err = await connect('ak_not_a_real_key').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { code?: number }).code).toBe(401);
    const raw = await http('POST', `${app.url}/mcp`, { token: 'ak_not_a_real_key', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { accept: 'application/json, text/event-stream' } });
    expect(raw.status).toBe(401);
    expect(raw.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('bad tool arguments are errors the client sees, and nothing is asked of the model', async () => {
    const client = await connect(org.apiKey);
    const chats = model.requests.length;
    const missing = await call(client, 'ask_agent', { agent: '@front-desk' });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/question/);
    const badTopK = await call(client, 'search_datastore', { datastore: publicStore, query: 'x', topK: 500 });
    expect(badTopK.isError).toBe(true);
    const nul = await call(client, 'ask_agent', { agent: '@front-desk', question: 'nul \u0000 byte' });
    expect(text(nul)).toMatch(/^BAD_USER_INPUT: question contains a NUL/);
    expect(model.requests.length).toBe(chats);
  });

  it('the same limits: an exhausted allowance is a PAYMENT_REQUIRED tool error', async () => {
    const broke = await newOrganization(app.url, 'Broke');
    await app.db.orm.em.getConnection().execute('update organizations set monthly_query_limit = 0 where id = ?', [broke.organizationId]);
    const theirs = (await gql(app.url, `mutation { createAgent(input: { name: "Z", visibility: public }) { id } }`, {}, { token: broke.apiKey })).data.createAgent.id;
    const chats = model.requests.length;
    const refused = await call(await connect(broke.apiKey), 'ask_agent', { agent: theirs, question: 'hi' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^PAYMENT_REQUIRED/);
    expect(model.requests.length).toBe(chats);
  });

  it('GET is 405: the server is stateless', async () => {
    const res = await http('GET', `${app.url}/mcp`, { token: org.apiKey, headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
  });
});
