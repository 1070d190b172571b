/**
 * A streamed answer leaves nothing behind once it has ended: after many streams over each of the
 * three transports (REST SSE, graphql-sse, the OpenAI-compatible /v1) and a full garbage
 * collection, none of their HTTP responses is still reachable (a response reaches the request,
 * the stream's iterators, its EntityManager and model call). The heap per stream is measured
 * outside the test runner, whose own records grow with every response: `npm run bench:stream-heap`. A listener per stream on the process-lifetime drain signal once kept every
 * finished stream (its request, response, EntityManager, model call) for good: 23 KB each, so a
 * service answering all day grew until it was restarted (issue 16, the soak).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { createClient } from 'graphql-sse';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, newOrganization } from './support/client.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { readSse, summarize } from './support/sse.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

let app: TestApp;
let model: OpenAiTestServer;
const REPLY = 'Each token of this reply is streamed to the client.';

beforeAll(async () => {
  model = await startOpenAiTestServer();
  model.setChatReply(() => REPLY);
  // The test server keeps every request it saw; a test of memory has no use for them.
  app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key', RATE_LIMIT_IP_PER_MINUTE: '100000', RATE_LIMIT_VISITOR_PER_MINUTE: '100000' });
});

afterAll(async () => {
  await app?.close();
  await model?.close();
});

/** A full collection, with the turns between that let weak references and finalizers settle. */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
}

/** Runs `count` jobs, `concurrency` at a time. */
async function inParallel(count: number, concurrency: number, job: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await job(next++);
  }));
}

it('answered streams keep no memory: after a full collection none of their responses is reachable', async () => {
  const org = await newOrganization(app.url, 'Streams');
  const agentId = (await gql(app.url, `mutation { createAgent(input: { name: "Streamer", visibility: public }) { id } }`, {}, { token: org.apiKey })).data.createAgent.id;
  const openai = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: org.apiKey, maxRetries: 0 });
  const sse = createClient({ url: `${app.url}/graphql/stream`, headers: { authorization: `Bearer ${org.apiKey}` }, retryAttempts: 0 });

  let visitor = 0;
  const viaRest = async (i: number) => {
    const res = await fetch(`${app.api}/agents/${agentId}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `rest ${i}`, streaming: true, visitorId: `memory-${visitor++}` }) });
    const events = await readSse(res);
    expect(summarize(events).answer).toBe(REPLY);
    expect(events.at(-1)!.data).toBe('[DONE]');
  };
  const viaV1 = async (i: number) => {
    let text = '';
    for await (const chunk of await openai.chat.completions.create({ model: agentId, stream: true, messages: [{ role: 'user', content: `v1 ${i}` }] })) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(REPLY);
  };
  const viaGraphqlSse = async (i: number) => {
    let text = '';
    for await (const event of sse.iterate({ query: `subscription($id: ID!, $q: String!) { agentQueryStream(id: $id, input: { query: $q }) { type text } }`, variables: { id: agentId, q: `sse ${i}` } })) {
      const e = (event.data as { agentQueryStream: { type: string; text: string | null } }).agentQueryStream;
      if (e.type === 'answer') text += e.text ?? '';
    }
    expect(text).toBe(REPLY);
  };
  const round = async (count: number) => {
    await inParallel(count, 10, viaRest);
    await inParallel(count / 4, 5, viaV1);
    await inParallel(count / 4, 5, viaGraphqlSse);
  };

  const responses: { ref: WeakRef<object>; what: string }[] = [];
  app.app!.server.on('request', (req, res) => responses.push({ ref: new WeakRef(res), what: `${req.method} ${req.url}` }));
  await round(80);
  expect(responses.length).toBeGreaterThanOrEqual(120);
  sse.dispose();
  // A kept-alive connection holds its last request until the next one, a client that has read a
  // stream's end closes its side a moment later, and an answer is stored after its last frame
  // (slowly when the machine is busy): close idle connections and collect until none is left, or
  // for 12 s. What a leak keeps stays whatever the wait.
  const kept = () => responses.filter((r) => r.ref.deref() !== undefined).map((r) => r.what);
  for (let tries = 0; tries < 40; tries++) {
    app.app!.server.closeIdleConnections();
    await collect();
    if (!kept().length) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  expect(kept(), `finished responses still reachable, of ${responses.length}`).toEqual([]);
}, 120_000);
