/**
 * One set of rules: the same question through every entry point (REST, GraphQL, the
 * OpenAI-compatible /v1, MCP; complete and streamed) gives the same answer and the same sources,
 * and the same search through REST, GraphQL, MCP and Dify the same fragments. The local
 * OpenAI-compatible test server is the model.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { readSse } from './support/sse.ts';
import { waitFor } from './support/wait.ts';

let model: OpenAiTestServer;
let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let store: string;
let agent: string;
let mcp: Client;
let openai: OpenAI;

interface Source {
  text: string;
  score: number;
  source: string;
  datasource_id: string;
}
interface Answer {
  answer: string;
  sources: Source[];
}

const QUESTION = 'How long do I have to return a purchase?';
const SOURCE_FIELDS = ({ text, score, source, datasource_id }: Source) => ({ text, score, source, datasource_id });

const askedThrough: Record<string, () => Promise<Answer>> = {
  'REST': async () => (await http('POST', `${app.api}/agents/${agent}/query`, { token: org.apiKey, body: { query: QUESTION } })).body,
  'REST stream': async () => {
    const res = await fetch(`${app.api}/agents/${agent}/query`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: QUESTION, streaming: true }) });
    const events = await readSse(res);
    // Text in `answer` events; the rest of the response in `endpoint_response`.
    const answer = events.filter((e) => e.event === 'answer').map((e) => e.data).join('');
    const json = events.filter((e) => e.event === 'endpoint_response').map((e) => e.data).join('');
    return { answer, sources: JSON.parse(json).sources };
  },
  'GraphQL': async () => (await gql(app.url, `mutation($id: ID!, $q: String!) { agentQuery(id: $id, input: { query: $q }) { answer sources { text score source datasource_id } } }`, { id: agent, q: QUESTION }, { token: org.apiKey })).data.agentQuery,
  '/v1': async () => {
    const completion = await openai.chat.completions.create({ model: agent, messages: [{ role: 'user', content: QUESTION }] });
    return { answer: completion.choices[0]!.message.content!, sources: (completion as unknown as Answer).sources };
  },
  '/v1 stream': async () => {
    let answer = '';
    let sources: Source[] = [];
    for await (const chunk of await openai.chat.completions.create({ model: agent, messages: [{ role: 'user', content: QUESTION }], stream: true })) {
      answer += chunk.choices[0]?.delta.content ?? '';
      sources = (chunk as unknown as { sources?: Source[] }).sources ?? sources;
    }
    return { answer, sources };
  },
  'MCP': async () => (((await mcp.callTool({ name: 'ask_agent', arguments: { agent, question: QUESTION } })) as CallToolResult).structuredContent as unknown as Answer),
};

const searchedThrough: Record<string, () => Promise<Source[]>> = {
  'REST': async () => (await http('POST', `${app.api}/datastores/${store}/query`, { token: org.apiKey, body: { query: QUESTION, topK: 3 } })).body,
  'GraphQL': async () => (await gql(app.url, `query($id: ID!, $q: String!) { datastoreQuery(id: $id, input: { query: $q, topK: 3 }) { text score source datasource_id } }`, { id: store, q: QUESTION }, { token: org.apiKey })).data.datastoreQuery,
  'MCP': async () => (((await mcp.callTool({ name: 'search_datastore', arguments: { datastore: store, query: QUESTION, topK: 3 } })) as CallToolResult).structuredContent as { fragments: Source[] }).fragments,
  'Dify': async () =>
    (await http('POST', `${app.url}/dify/retrieval`, { token: org.apiKey, body: { knowledge_id: store, query: QUESTION, retrieval_setting: { top_k: 3, score_threshold: 0 } } })).body.records.map(
      (r: { content: string; score: number; metadata: { source: string; datasource_id: string } }) => ({ text: r.content, score: r.score, source: r.metadata.source, datasource_id: r.metadata.datasource_id }),
    ),
};

beforeAll(async () => {
  model = await startOpenAiTestServer();
  app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key' });
  org = await newOrganization(app.url, 'Protocols');
  store = (await gql(app.url, `mutation { createDatastore(input: { name: "KB" }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
  const docs = {
    refunds: 'Customers can return any purchase within thirty days and receive their money back in full.',
    hours: 'The support desk is staffed from nine in the morning until five in the evening, Monday to Friday.',
    shipping: 'Parcels are dispatched from our warehouse within two business days.',
  };
  for (const [name, text] of Object.entries(docs)) {
    const id = (await http('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'text', name, text } })).body.id;
    await waitFor(async () => (await gql(app.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id }, { token: org.apiKey })).data?.datasource.status === 'synched', 60_000, name);
  }
  agent = (await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Same', datastoreIds: [store], systemPrompt: 'Answer from the context.' } }, { token: org.apiKey })).data.createAgent.id;
  mcp = new Client({ name: 'test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${org.apiKey}` } } }));
  openai = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: org.apiKey, maxRetries: 0 });
  // The reply depends on what the model is sent: equal replies mean equal prompts.
  model.setChatReply((body) => `Reply to ${body.messages.length} messages; system ${body.messages[0].content.length} chars; "${body.messages.at(-1).content}"`);
}, 180_000);

afterAll(async () => {
  await mcp?.close();
  await app?.close();
  await model?.close();
});

describe('the same question through every entry point', () => {
  let reference: Answer;
  beforeAll(async () => {
    reference = await askedThrough.REST!();
    expect(reference.answer).toMatch(/^Reply to 2 messages; system \d+ chars; "How long do I have to return a purchase\?"$/);
    expect(reference.sources.length).toBeGreaterThan(0);
    expect(reference.sources[0]!.text).toMatch(/return any purchase/);
  });

  it.each(Object.keys(askedThrough))('%s gives the same answer text and the same sources', async (name) => {
    const got = await askedThrough[name]!();
    expect(got.answer).toBe(reference.answer);
    expect(got.sources.map(SOURCE_FIELDS)).toEqual(reference.sources.map(SOURCE_FIELDS));
  });
});

describe('the same search through every entry point', () => {
  let reference: Source[];
  beforeAll(async () => {
    reference = await searchedThrough.REST!();
    expect(reference).toHaveLength(3);
  });

  it.each(Object.keys(searchedThrough))('%s gives the same fragments, in the same order, with the same scores', async (name) => {
    expect((await searchedThrough[name]!()).map(SOURCE_FIELDS)).toEqual(reference.map(SOURCE_FIELDS));
  });
});
