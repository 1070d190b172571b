/**
 * Answers grounded in the datastores (interface.md endpoints 4, 7, 13 and the Events section),
 * on the real database, with the local embedding model, and a local OpenAI-compatible server as
 * the only stand-in (for the chat model) driven through the real @langchain/openai client.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NOTHING_FOUND_ANSWER, QUOTE_NOTE } from '../src/answers/extractive.ts';
import { currentPeriod, QueryAllowance } from '../src/limits/queries.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { leaveAfterFirstAnswer, messagesOfVisitor, readSse, summarize } from './support/sse.ts';
import { waitFor } from './support/wait.ts';

let model: OpenAiTestServer;
let app: TestApp; // with a chat model
let plain: TestApp; // the embedded default: no model configured
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
let store: string;
let agent: string;
let privateAgent: string;

const CORPUS: Record<string, string> = {
  refunds: 'Customers can return any purchase within thirty days and receive their money back in full.',
  hours: 'The support desk is staffed from nine in the morning until five in the evening, Monday to Friday.',
  shipping: 'Parcels are dispatched from our warehouse within two business days and arrive in about a week abroad.',
  password: 'To change your login credentials, open the account settings page and choose a new secret phrase.',
  pets: 'Dogs and cats are welcome in the store as long as they are kept on a leash.',
  parking: 'Visitors may leave their cars in the underground garage beneath the building free of charge.',
  warranty: 'Every appliance comes with a two-year guarantee covering manufacturing defects.',
  security: 'We encrypt all stored data and never sell personal information to third parties.',
};
const QUESTIONS: [string, string][] = [
  ['How long do I have to send an item back for a refund?', 'refunds'],
  ['When can I reach someone for help?', 'hours'],
  ['How fast will my order be delivered?', 'shipping'],
  ['How do I reset my password?', 'password'],
  ['Can I bring my animal when I shop?', 'pets'],
  ['Where should I put my vehicle when I visit?', 'parking'],
  ['What happens if my machine breaks because of a factory fault?', 'warranty'],
  ['Do you share my data with other companies?', 'security'],
];
const ids: Record<string, string> = {};

async function addText(token: string, datastoreId: string, name: string, text: string, customId?: string) {
  const res = await http('POST', `${app.api}/datasources`, { token, body: { datastoreId, type: 'text', name, text, ...(customId ? { custom_id: customId } : {}) } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as string;
}

async function synched(token: string, id: string) {
  await waitFor(async () => (await gql(app.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id }, { token })).data?.datasource.status === 'synched', 60_000, `datasource ${id}`);
}

const query = (datastoreId: string, body: unknown, token?: string | null) => http('POST', `${app.api}/datastores/${datastoreId}/query`, { token, body });
const ask = (agentId: string, body: unknown, token?: string | null, on = app) => http('POST', `${on.api}/agents/${agentId}/query`, { token, body });

beforeAll(async () => {
  model = await startOpenAiTestServer();
  app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key', MODEL_4: 'gpt-test-4', RATE_LIMIT_VISITOR_PER_MINUTE: '1000' });
  plain = await startTestApp({ RATE_LIMIT_VISITOR_PER_MINUTE: '3' });
  org = await newOrganization(app.url, 'Answers');
  other = await newOrganization(app.url, 'Other');
  store = (await gql(app.url, `mutation { createDatastore(input: { name: "KB", visibility: public }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
  for (const [name, text] of Object.entries(CORPUS)) ids[name] = await addText(org.apiKey, store, name, text, name === 'pets' || name === 'parking' ? 'tenant-b' : 'tenant-a');
  for (const id of Object.values(ids)) await synched(org.apiKey, id);
  const create = async (visibility: string) =>
    (await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Helper', visibility, datastoreIds: [store], systemPrompt: 'You are Helper.', userPrompt: 'Question: {query}' } }, { token: org.apiKey })).data.createAgent.id;
  agent = await create('public');
  privateAgent = await create('private');
}, 180_000);

afterAll(async () => {
  await app?.close();
  await plain?.close();
  await model?.close();
});

describe('datastore query (endpoint 4)', () => {
  it('follows a change of visibility and a deletion at once (the access snapshot is cached)', async () => {
    const ds = (await gql(app.url, `mutation { createDatastore(input: { name: "Flip", visibility: public }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
    expect((await query(ds, { query: 'anything' })).status).toBe(200);
    const flipped = await gql(app.url, `mutation($id: ID!) { updateDatastore(id: $id, input: { visibility: private }) { visibility } }`, { id: ds }, { token: org.apiKey });
    expect(flipped.data.updateDatastore.visibility).toBe('private');
    // No credentials on a private datastore: asked for them (401), as interface.md says.
    expect((await query(ds, { query: 'anything' })).status).toBe(401);
    expect((await query(ds, { query: 'anything' }, other.apiKey)).status).toBe(404);
    expect((await query(ds, { query: 'anything' }, org.apiKey)).status).toBe(200);
    expect((await gql(app.url, `mutation($id: ID!) { deleteDatastore(id: $id) { id } }`, { id: ds }, { token: org.apiKey })).errors).toBeUndefined();
    expect((await query(ds, { query: 'anything' }, org.apiKey)).status).toBe(404);
  });

  it('finds the right passage in the top 3 for paraphrased questions', async () => {
    let hits = 0;
    for (const [question, expected] of QUESTIONS) {
      const res = await query(store, { query: question, topK: 3 });
      expect(res.status).toBe(200);
      if (res.body.some((f: { datasource_id: string }) => f.datasource_id === ids[expected])) hits++;
    }
    expect(hits).toBe(QUESTIONS.length);
  });

  it('answers the documented shape in descending score, topK 5 by default', async () => {
    const res = await query(store, { query: 'refund' });
    expect(res.body).toHaveLength(5);
    for (const f of res.body) expect(Object.keys(f).sort()).toEqual(['datasource_id', 'datasource_name', 'score', 'source', 'text']);
    const scores = res.body.map((f: { score: number }) => f.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(res.body[0].datasource_id).toBe(ids.refunds);
    expect(res.body[0].source).toBe('refunds');
  });

  it('scores are relevances from 0 to 1 that compare across queries; minScore drops weaker fragments', async () => {
    const onTopic = (await query(store, { query: 'How long do I have to return a purchase for my money back?', topK: 8 })).body;
    const offTopic = (await query(store, { query: 'Which composer wrote the opera about a magic flute?', topK: 8 })).body;
    for (const f of [...onTopic, ...offTopic]) expect(f.score).toBeGreaterThanOrEqual(0), expect(f.score).toBeLessThanOrEqual(1);
    expect(onTopic[0].datasource_id).toBe(ids.refunds);
    // A fused rank would give both first fragments about 1: a relevance tells the good match from the poor one.
    expect(onTopic[0].score).toBeGreaterThan(offTopic[0].score + 0.15);
    const cut = onTopic[0].score - 0.01;
    const strong = await query(store, { query: 'How long do I have to return a purchase for my money back?', topK: 8, minScore: cut });
    expect(strong.status).toBe(200);
    expect(strong.body.map((f: { datasource_id: string }) => f.datasource_id)).toEqual([ids.refunds]);
    expect((await query(store, { query: 'Which composer wrote the opera about a magic flute?', minScore: cut })).body).toEqual([]);
    const graphql = await gql(app.url, `query($id: ID!, $i: DatastoreQueryInput!) { datastoreQuery(id: $id, input: $i) { score } }`, { id: store, i: { query: 'refund', minScore: 0.99 } });
    expect(graphql.data.datastoreQuery).toEqual([]);
    for (const minScore of [1.5, -0.1, 'high']) {
      const bad = await query(store, { query: 'refund', minScore });
      expect(bad.status, JSON.stringify(minScore)).toBe(400);
      expect(bad.body.error.code).toBe('BAD_USER_INPUT');
    }
  });

  it('filters by datasource_ids and custom_ids inside the search', async () => {
    const byDs = await query(store, { query: 'money back', topK: 10, filters: { datasource_ids: [ids.pets, ids.parking] } });
    expect(byDs.body.map((f: { datasource_id: string }) => f.datasource_id).sort()).toEqual([ids.pets, ids.parking].sort());
    const byCustom = await query(store, { query: 'money back', topK: 10, filters: { custom_ids: ['tenant-b'] } });
    expect(new Set(byCustom.body.map((f: { datasource_id: string }) => f.datasource_id))).toEqual(new Set([ids.pets, ids.parking]));
    const both = await query(store, { query: 'x', topK: 10, filters: { custom_ids: ['tenant-a'], datasource_ids: [ids.pets] } });
    expect(both.body).toEqual([]);
    const none = await query(store, { query: 'refund', filters: { datasource_ids: ['not-an-id'] } });
    expect(none.body).toEqual([]);
  });

  it('a filtered query still returns topK rows when that many match', async () => {
    const many = (await gql(app.url, `mutation { createDatastore(input: { name: "Many" }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
    const created: string[] = [];
    for (let i = 0; i < 24; i++) created.push(await addText(org.apiKey, many, `n${i}`, `Note ${i}: the colour of item ${i} is ${['red', 'green', 'blue'][i % 3]} and its weight is ${i} grams.`, i % 3 === 0 ? 'rare' : 'common'));
    for (const id of created) await synched(org.apiKey, id);
    const res = await query(many, { query: 'what colour is the item', topK: 8, filters: { custom_ids: ['rare'] } }, org.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(8);
  }, 120_000);

  it('private datastores need a key of their organization; bad input is 400', async () => {
    const priv = (await gql(app.url, `mutation { createDatastore(input: { name: "P" }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
    expect((await query(priv, { query: 'x' })).status).toBe(401);
    expect((await query(priv, { query: 'x' }, other.apiKey)).status).toBe(404);
    expect((await query(priv, { query: 'x' }, org.apiKey)).status).toBe(200);
    expect((await query(priv, { query: 'x' }, 'ak_bad')).status).toBe(401);
    for (const body of [{ query: 'x', topK: 101 }, { query: 'x', topK: 0 }, { query: 'x', topK: 2.5 }, {}, { query: '' }, { query: 'x', filters: { custom_ids: [1] } }]) {
      const res = await query(store, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('BAD_USER_INPUT');
    }
  });
});

describe('agent query (endpoint 7)', () => {
  it('forwards every parameter, the fragments and the prompts to the model', async () => {
    model.setChatReply(() => 'Within thirty days.');
    model.requests.length = 0;
    const res = await ask(agent, { query: 'Can I get a refund?', modelName: 'model_4', temperature: 0.3, maxTokens: 123, presencePenalty: 0.5, frequencyPenalty: -0.5, topP: 0.9 }, org.apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['answer', 'conversationId', 'messageId', 'sources', 'visitorId']);
    expect(res.body.answer).toBe('Within thirty days.');
    expect(res.body.sources[0]).toMatchObject({ datasource_id: ids.refunds, text: CORPUS.refunds });
    const sent = model.requests.find((r) => r.path.endsWith('/chat/completions'))!.body;
    expect(sent).toMatchObject({ model: 'gpt-test-4', temperature: 0.3, max_tokens: 123, presence_penalty: 0.5, frequency_penalty: -0.5, top_p: 0.9 });
    const system = sent.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain('You are Helper.');
    expect(system.content).toContain(CORPUS.refunds);
    expect(sent.messages.at(-1)).toEqual({ role: 'user', content: 'Question: Can I get a refund?' });
  });

  it('uses the agent settings by default and lets the request override the prompts', async () => {
    model.requests.length = 0;
    await ask(agent, { query: 'hello', systemPrompt: 'Be brief.', userPrompt: 'Context: {context}\nQ: {query}' }, org.apiKey);
    const sent = model.requests.find((r) => r.path.endsWith('/chat/completions'))!.body;
    expect(sent.model).toBe('gpt-4o-mini'); // model_3_5_turbo's default id
    expect(sent.temperature).toBe(0);
    expect(sent.messages[0].content).toBe('Be brief.');
    expect(sent.messages.at(-1).content).toMatch(/^Context: \[1\]/);
    expect(sent.messages.at(-1).content).toMatch(/Q: hello$/);
  });

  it('a follow-up sends the history, and both messages are stored', async () => {
    model.setChatReply((body) => `reply ${body.messages.length}`);
    const first = await ask(agent, { query: 'first question' }, org.apiKey);
    model.requests.length = 0;
    const second = await ask(agent, { query: 'second question', conversationId: first.body.conversationId, visitorId: first.body.visitorId }, org.apiKey);
    expect(second.body.conversationId).toBe(first.body.conversationId);
    const sent = model.requests.find((r) => r.path.endsWith('/chat/completions'))!.body;
    expect(sent.messages.slice(1, 3)).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: first.body.answer },
    ]);
    const conv = await http('GET', `${app.api}/conversations/${first.body.conversationId}`);
    expect(conv.body.messages.map((m: { from: string; text: string }) => `${m.from}:${m.text}`)).toEqual([
      `agent:${second.body.answer}`,
      'human:second question',
      `agent:${first.body.answer}`,
      'human:first question',
    ]);
  });

  it('refuses bad input, other agents\' conversations, and strangers of a private agent', async () => {
    const cases: [unknown, string][] = [
      [{}, 'query'],
      [{ query: 'x', modelName: 'model_4_32k' }, 'modelName'],
      [{ query: 'x', temperature: 1.5 }, 'temperature'],
      [{ query: 'x', presencePenalty: 2.5 }, 'presencePenalty'],
      [{ query: 'x', frequencyPenalty: -3 }, 'frequencyPenalty'],
      [{ query: 'x', topP: 2 }, 'topP'],
      [{ query: 'x', maxTokens: 0 }, 'maxTokens'],
      [{ query: 'x', streaming: 'yes' }, 'streaming'],
      [{ query: 'x', promptType: 'fancy' }, 'promptType'],
    ];
    for (const [body, field] of cases) {
      const res = await ask(agent, body, org.apiKey);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details.field, JSON.stringify(body)).toBe(field);
    }
    const theirs = (await gql(app.url, `mutation { createAgent(input: { name: "T", visibility: public }) { id } }`, {}, { token: other.apiKey })).data.createAgent.id;
    const conv = (await ask(theirs, { query: 'hi' })).body.conversationId;
    expect((await ask(agent, { query: 'hi', conversationId: conv })).status).toBe(404);
    expect((await ask(agent, { query: 'hi', conversationId: '9a1d0f1e-0000-4000-8000-000000000000' })).status).toBe(404);
    expect((await ask(privateAgent, { query: 'hi' })).status).toBe(401);
    expect((await ask(privateAgent, { query: 'hi' }, other.apiKey)).status).toBe(404);
    expect((await ask(privateAgent, { query: 'hi' }, 'ak_wrong')).status).toBe(401);
    expect((await ask(privateAgent, { query: 'hi' }, org.session)).status).toBe(200);
  });

  it('another organization\'s private datastores are never searched', async () => {
    const secret = (await gql(app.url, `mutation { createDatastore(input: { name: "Secret" }) { id } }`, {}, { token: other.apiKey })).data.createDatastore.id;
    const sid = await addText(other.apiKey, secret, 'secret', 'The launch code is swordfish.');
    await synched(other.apiKey, sid);
    const res = await ask(agent, { query: 'What is the launch code?', filters: { datasource_ids: [sid] } });
    expect(res.body.sources).toEqual([]);
    expect(JSON.stringify(res.body)).not.toContain('swordfish');
  });
});

describe('streaming', () => {
  it('REST SSE, the graphql-sse subscription and the complete answer agree', async () => {
    model.setChatReply(() => 'Line one.\nLine two has more words in it.');
    const complete = await ask(agent, { query: 'stream me' }, org.apiKey);
    const res = await fetch(`${app.api}/agents/${agent}/query`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${org.apiKey}` }, body: JSON.stringify({ query: 'stream me', streaming: true }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    const events = await readSse(res);
    const { answer, response, last } = summarize(events);
    expect(events.filter((e) => e.event === 'answer').length).toBeGreaterThan(1);
    expect(answer).toBe(complete.body.answer);
    expect(Object.keys(response).sort()).toEqual(['conversationId', 'messageId', 'sources', 'visitorId']);
    expect(response.sources).toEqual(complete.body.sources);
    expect(last).toBe('[DONE]');

    const client = createClient({ url: `${app.url}/graphql/stream`, headers: { authorization: `Bearer ${org.apiKey}` } });
    let text = '';
    let final: any = null;
    for await (const event of client.iterate({ query: `subscription($id: ID!, $input: AgentQueryInput!) { agentQueryStream(id: $id, input: $input) { type text response { answer conversationId sources { text } } } }`, variables: { id: agent, input: { query: 'stream me' } } })) {
      const e = (event.data as any).agentQueryStream;
      if (e.type === 'answer') text += e.text;
      else final = e.response;
    }
    client.dispose();
    expect(text).toBe(complete.body.answer);
    expect(final.answer).toBe(complete.body.answer);
  });

  it('bad input to a streamed query is a 400 JSON error before the stream, over REST and graphql-sse; nothing is stored or counted', async () => {
    const conversations = async () => Number((await app.db.orm.em.getConnection().execute('select count(*)::int as n from conversations where agent_id = ?', [agent]))[0].n);
    const used = async () => Number((await app.db.orm.em.getConnection().execute('select coalesce(sum(queries), 0)::int as n from organization_usage where organization_id = ?', [org.organizationId]))[0].n);
    await app.services.limits.queries.settled(); // the query reserved ahead after the last answer
    const [convBefore, usedBefore] = [await conversations(), await used()];
    const cases: [Record<string, unknown>, string][] = [
      [{ query: 'hi', temperature: 5 }, 'temperature'],
      [{ query: 'hi', topP: -1 }, 'topP'],
      [{ query: 'hi', maxTokens: 0 }, 'maxTokens'],
      [{ query: '' }, 'query'],
      [{ query: 'hi', visitorId: 'v'.repeat(201) }, 'visitorId'],
    ];
    for (const [body, field] of cases) {
      const res = await fetch(`${app.api}/agents/${agent}/query`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${org.apiKey}` }, body: JSON.stringify({ ...body, streaming: true }) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const error = ((await res.json()) as any).error;
      expect(error.code).toBe('BAD_USER_INPUT');
      expect(error.details.field, JSON.stringify(body)).toBe(field);
      // The same refusal as the complete answer's.
      const complete = await ask(agent, body, org.apiKey);
      expect(complete.status).toBe(400);
      expect(complete.body.error).toEqual(error);
    }

    const client = createClient({ url: `${app.url}/graphql/stream`, headers: { authorization: `Bearer ${org.apiKey}` } });
    const results: any[] = [];
    for await (const event of client.iterate({ query: `subscription($id: ID!, $input: AgentQueryInput!) { agentQueryStream(id: $id, input: $input) { type text } }`, variables: { id: agent, input: { query: 'hi', temperature: 5 } } })) {
      results.push(event);
    }
    client.dispose();
    expect(results).toHaveLength(1);
    expect(results[0].data ?? null).toBeNull();
    // The same error shape as /graphql and REST: the table's code, details naming the field, nothing else.
    expect(results[0].errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', details: { field: 'temperature', fields: { temperature: expect.any(String) } } });

    expect(await conversations()).toBe(convBefore);
    expect(await used()).toBe(usedBefore);
  });

  it('a new streamed conversation is stored with both messages, and has no history to send', async () => {
    model.setChatReply(() => 'Thirty days.');
    const conversations = async () => Number((await app.db.orm.em.getConnection().execute('select count(*)::int as n from conversations where agent_id = ?', [agent]))[0].n);
    const before = await conversations();
    const res = await fetch(`${app.api}/agents/${agent}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'How long for returns?', streaming: true, visitorId: 'visitor-new-conv' }) });
    const { response, last } = summarize(await readSse(res));
    expect(last).toBe('[DONE]');
    expect(await conversations()).toBe(before + 1);
    const rows = await app.db.orm.em.getConnection().execute('select c.visitor_id, c.channel, m."from", m.text from conversations c join messages m on m.conversation_id = c.id where c.id = ? order by m.id', [response.conversationId]);
    expect(rows.map((r: any) => [r.visitor_id, r.channel, r.from, r.text])).toEqual([
      ['visitor-new-conv', 'api', 'human', 'How long for returns?'],
      ['visitor-new-conv', 'api', 'agent', 'Thirty days.'],
    ]);
    // The model got no history for it; the follow-up gets both messages.
    const lastChat = () => model.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body;
    expect(lastChat().messages.map((m: any) => m.role)).toEqual(['system', 'user']);
    const follow = await ask(agent, { query: 'And exchanges?', conversationId: response.conversationId });
    expect(follow.status).toBe(200);
    expect(lastChat().messages.slice(1).map((m: any) => m.content)).toEqual(['How long for returns?', 'Thirty days.', 'Question: And exchanges?']);
  });

  it('a client that disconnects aborts the model call', async () => {
    model.setChatReply(() => Array.from({ length: 200 }, (_, i) => `word${i}`).join(' '));
    model.setStreamTiming({ tokenDelayMs: 20 });
    const controller = new AbortController();
    const res = await fetch(`${app.api}/agents/${agent}/query`, { method: 'POST', signal: controller.signal, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'long one', streaming: true }) });
    const reader = res.body!.getReader();
    await reader.read(); // the stream has started
    const before = model.aborted();
    controller.abort();
    await model.whenAborted(before + 1);
    model.setStreamTiming({ tokenDelayMs: 0 });
    expect(model.aborted()).toBe(before + 1);
  });

  it('an exhausted allowance answers 402 before any stream byte', async () => {
    const broke = await newOrganization(app.url, 'Broke');
    await app.db.orm.em.getConnection().execute('update organizations set monthly_query_limit = 0 where id = ?', [broke.organizationId]);
    const theirs = (await gql(app.url, `mutation { createAgent(input: { name: "Z", visibility: public }) { id } }`, {}, { token: broke.apiKey })).data.createAgent.id;
    const chats = model.requests.length;
    const res = await fetch(`${app.api}/agents/${theirs}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'hi', streaming: true }) });
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(((await res.json()) as any).error.code).toBe('PAYMENT_REQUIRED');
    expect((await ask(theirs, { query: 'hi' })).status).toBe(402);
    expect(model.requests.length).toBe(chats); // no model call
  });

  it('a model failure mid-answer ends the stream with [ERROR]', async () => {
    model.failNext('/v1/chat/completions', 500, 2); // the first attempt and the client's one retry
    const res = await fetch(`${app.api}/agents/${agent}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'fail please', streaming: true }) });
    const { last } = summarize(await readSse(res));
    expect(last).toMatch(/^\[ERROR\]The model endpoint answered 500/);
  });
});

describe('the monthly allowance (one query reserved ahead)', () => {
  const stored = async (organizationId: string, period = currentPeriod()) =>
    Number((await app.db.orm.em.getConnection().execute('select coalesce(sum(queries), 0)::int as n from organization_usage where organization_id = ? and period = ?', [organizationId, period]))[0].n);
  const metered = async (limit: number) => {
    const o = await newOrganization(app.url, `Metered ${limit}`);
    await app.db.orm.em.getConnection().execute('update organizations set monthly_query_limit = ? where id = ?', [limit, o.organizationId]);
    const id = (await gql(app.url, `mutation { createAgent(input: { name: "M", visibility: public }) { id } }`, {}, { token: o.apiKey })).data.createAgent.id as string;
    return { ...o, agent: id };
  };

  it('answers exactly the limit, one at a time; the stored count is the answers plus the one reserved ahead', async () => {
    const m = await metered(3);
    const first = await ask(m.agent, { query: 'one' });
    expect(first.status).toBe(200);
    await app.services.limits.queries.settled();
    expect(await stored(m.organizationId)).toBe(2); // the answer, and the next question's query
    expect((await ask(m.agent, { query: 'two' })).status).toBe(200);
    const streamed = await fetch(`${app.api}/agents/${m.agent}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'three', streaming: true }) });
    expect(streamed.status).toBe(200);
    expect(summarize(await readSse(streamed)).last).toBe('[DONE]');
    await app.services.limits.queries.settled();
    const refused = await ask(m.agent, { query: 'four' });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('PAYMENT_REQUIRED');
    expect(await stored(m.organizationId)).toBe(3);
  });

  it('answers exactly the limit when the questions come all at once', async () => {
    const m = await metered(5);
    expect((await ask(m.agent, { query: 'warm-up' })).status).toBe(200); // leaves a query reserved ahead
    await app.services.limits.queries.settled();
    const statuses = await Promise.all(Array.from({ length: 12 }, (_, i) => ask(m.agent, { query: `burst ${i}` }).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    expect(statuses.filter((s) => s === 402)).toHaveLength(8);
    await app.services.limits.queries.settled();
    expect(await stored(m.organizationId)).toBe(5);
  });

  it('a question that fails before any text gives its query back', async () => {
    const m = await metered(10);
    expect((await ask(m.agent, { query: 'fine' })).status).toBe(200);
    await app.services.limits.queries.settled();
    expect(await stored(m.organizationId)).toBe(2);
    model.failNext('/v1/chat/completions', 500, 2); // the first attempt and the client's one retry
    const failed = await fetch(`${app.api}/agents/${m.agent}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'fail please', streaming: true }) });
    expect(summarize(await readSse(failed)).last).toMatch(/^\[ERROR\]/);
    await app.services.limits.queries.settled();
    expect(await stored(m.organizationId)).toBe(2); // still one answer and one reserved ahead
  });

  it('a stream left mid-answer keeps the partial answer (incomplete) and its query; one left before any text gives its query back', async () => {
    const m = await metered(10);
    const messagesOf = (visitorId: string) => messagesOfVisitor(app.db.orm.em.getConnection(), visitorId);
    const reply = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    model.setChatReply(() => reply);
    try {
      model.setStreamTiming({ tokenDelayMs: 20 });
      await leaveAfterFirstAnswer(`${app.api}/agents/${m.agent}/query`, { query: 'long one', visitorId: 'leaves-mid-answer' }, model);
      await waitFor(async () => (await messagesOf('leaves-mid-answer')).length === 2, 10_000, 'the partial answer');
      const [human, partial] = await messagesOf('leaves-mid-answer');
      expect(human).toMatchObject({ from: 'human', text: 'long one' });
      expect(partial!.from).toBe('agent');
      expect(partial!.metadata).toEqual({ incomplete: true });
      expect(partial!.text.length).toBeGreaterThan(0);
      expect(reply.startsWith(partial!.text)).toBe(true);
      expect(partial!.text.length).toBeLessThan(reply.length);
      await app.services.limits.queries.settled();
      expect(await stored(m.organizationId)).toBe(1); // the partial answer counts; nothing reserved ahead

      // Left while the model has said nothing yet: nothing is stored, and the query goes back.
      model.setStreamTiming({ firstTokenDelayMs: 3_000 });
      const early = new AbortController();
      const chats = model.requests.length;
      const pending = fetch(`${app.api}/agents/${m.agent}/query`, { method: 'POST', signal: early.signal, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'never mind', streaming: true, visitorId: 'leaves-early' }) }).catch(() => null);
      await waitFor(async () => model.requests.length > chats, 10_000, 'the model call');
      const abortedBefore = model.aborted();
      early.abort();
      await pending;
      await model.whenAborted(abortedBefore + 1);
      model.setStreamTiming({ tokenDelayMs: 0 });
      await app.services.limits.queries.settled();
      expect(await messagesOf('leaves-early')).toEqual([]);
      expect((await ask(m.agent, { query: 'short one' })).status).toBe(200);
      await app.services.limits.queries.settled();
      expect(await stored(m.organizationId)).toBe(3); // the partial answer, this answer, and one reserved ahead
    } finally {
      model.setStreamTiming({ tokenDelayMs: 0 });
    }
  });

  it('gives reserved-ahead queries back when closed, a past month\'s to that month', async () => {
    const m = await metered(100);
    const em = app.db.orm.em.fork();
    const allowance = new QueryAllowance();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const now = new Date();
      vi.setSystemTime(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));
      const lastMonth = currentPeriod();
      await allowance.reserve(em, m.organizationId);
      allowance.reserveAhead(em, m.organizationId);
      await allowance.settled();
      expect(await stored(m.organizationId, lastMonth)).toBe(2);
      vi.setSystemTime(now);
      await allowance.reserve(em, m.organizationId); // last month's spare cannot serve this month
      await allowance.settled();
      expect(await stored(m.organizationId, lastMonth)).toBe(1);
      expect(await stored(m.organizationId)).toBe(1);
      allowance.reserveAhead(em, m.organizationId);
      await allowance.settled();
      expect(await stored(m.organizationId)).toBe(2);
      await allowance.close(em);
      expect(await stored(m.organizationId)).toBe(1);
      await allowance.reserve(em, m.organizationId); // closed: a question reserves its own, nothing ahead
      allowance.reserveAhead(em, m.organizationId);
      await allowance.settled();
      expect(await stored(m.organizationId)).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('conversations (endpoint 13)', () => {
  it('pages newest first with cursors; every message exactly once', async () => {
    model.setChatReply((body) => `answer to ${body.messages.at(-1).content}`);
    let conversationId: string | undefined;
    for (let i = 0; i < 7; i++) conversationId = (await ask(agent, { query: `q${i}`, conversationId }, org.apiKey)).body.conversationId;
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: any = await http('GET', `${app.api}/conversations/${conversationId}?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({ id: conversationId, agentId: agent });
      for (const m of page.body.messages) expect(Object.keys(m).sort()).toEqual(['createdAt', 'from', 'id', 'sources', 'text']);
      seen.push(...page.body.messages.map((m: { id: string }) => m.id));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toHaveLength(14);
    expect(pages).toBe(4);
    expect(new Set(seen).size).toBe(14);
    expect(seen).toEqual([...seen].sort().reverse());
  });

  it('an unknown id is 404; limits are checked', async () => {
    expect((await http('GET', `${app.api}/conversations/5d6f3c1e-1234-4abc-8def-000000000000`)).status).toBe(404);
    expect((await http('GET', `${app.api}/conversations/nope`)).status).toBe(404);
    const conv = (await ask(agent, { query: 'x' }, org.apiKey)).body.conversationId;
    expect((await http('GET', `${app.api}/conversations/${conv}?limit=101`)).status).toBe(400);
    expect((await http('GET', `${app.api}/conversations/${conv}?cursor=garbage`)).status).toBe(400);
  });
});

describe('the embedded default: no chat model configured', () => {
  it('quotes the best fragments and says so; an agent without datastores says it has no knowledge', async () => {
    const o = await newOrganization(plain.url, 'Plain');
    const ds = (await gql(plain.url, `mutation { createDatastore(input: { name: "KB" }) { id } }`, {}, { token: o.apiKey })).data.createDatastore.id;
    const d = await http('POST', `${plain.api}/datasources`, { token: o.apiKey, body: { datastoreId: ds, type: 'text', name: 'hours', text: CORPUS.hours } });
    await waitFor(async () => (await gql(plain.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id: d.body.id }, { token: o.apiKey })).data.datasource.status === 'synched', 60_000);
    const a = (await gql(plain.url, `mutation($d: [ID!]) { createAgent(input: { name: "A", visibility: public, datastoreIds: $d }) { id } }`, { d: [ds] }, { token: o.apiKey })).data.createAgent.id;
    const res = await ask(a, { query: 'When is the support desk open?' }, null, plain);
    expect(res.status).toBe(200);
    // The answer is the quoted sentence itself, whole, then its source and the plain word that it quotes.
    expect(res.body.answer).toBe(`"${CORPUS.hours}" (hours)\n\n${QUOTE_NOTE}`);
    // A question the knowledge base knows nothing about quotes nothing.
    expect((await ask(a, { query: 'What is the capital of France?' }, null, plain)).body.answer).toBe(NOTHING_FOUND_ANSWER);
    // Streamed, the same answer arrives in pieces.
    const streamed = await fetch(`${plain.api}/agents/${a}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'When is the support desk open?', streaming: true }) });
    const events = await readSse(streamed);
    expect(events.filter((e) => e.event === 'answer').length).toBeGreaterThan(1);
    expect(summarize(events).answer).toBe(res.body.answer);
    const empty = (await gql(plain.url, `mutation { createAgent(input: { name: "E", visibility: public }) { id } }`, {}, { token: o.apiKey })).data.createAgent.id;
    expect((await ask(empty, { query: 'anything' }, null, plain)).body.answer).toMatch(/no knowledge to answer from/);
    // The agent's datastores are cached with it: a new link is used by the very next answer, and so is its removal.
    const link = (d: string[]) => gql(plain.url, `mutation($id: ID!, $d: [ID!]) { updateAgent(id: $id, input: { description: "linked", datastoreIds: $d }) { id datastoreIds } }`, { id: empty, d }, { token: o.apiKey });
    const linked = await link([ds]);
    expect(linked.errors, JSON.stringify(linked.errors)).toBeUndefined();
    expect((await ask(empty, { query: 'When is the support desk open?' }, null, plain)).body.answer).toContain(CORPUS.hours);
    const unlinked = await link([]);
    expect(unlinked.data.updateAgent.datastoreIds).toEqual([]);
    expect((await ask(empty, { query: 'When is the support desk open?' }, null, plain)).body.answer).toMatch(/no knowledge to answer from/);
  }, 90_000);

  it('anonymous visitors of a public agent are rate limited (429)', async () => {
    const o = await newOrganization(plain.url, 'Limited');
    const a = (await gql(plain.url, `mutation { createAgent(input: { name: "R", visibility: public }) { id } }`, {}, { token: o.apiKey })).data.createAgent.id;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await ask(a, { query: 'hi', visitorId: 'same-visitor' }, null, plain)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect((await ask(a, { query: 'hi', visitorId: 'same-visitor' }, o.apiKey, plain)).status).toBe(200); // its own organization is not limited
  });
});
