/**
 * SIGTERM drains instead of dropping: the process keeps listening but refuses new work with 503,
 * lets what is in flight finish for SHUTDOWN_GRACE_MS, ends the streams still open with an error
 * naming the shutdown, hands jobs it could not finish back to the queue, and exits 0. Real
 * processes (spawnMain); only the model endpoint is a local stand-in.
 */
import { createClient } from 'graphql-sse';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, newOrganization } from './support/client.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { killAll, signal } from './support/process.ts';
import { endpointEnv, FAST_RECOVERY, startProcess, sharedData } from './support/service.ts';
import { readSse, summarize } from './support/sse.ts';
import { waitFor } from './support/wait.ts';

const ON_POSTGRES = !!process.env.TEST_DATABASE_URL;
const GRACE_MS = 3_000;

let model: OpenAiTestServer;
const cleanups: (() => Promise<void>)[] = [];
beforeAll(async () => {
  model = await startOpenAiTestServer();
});
afterAll(async () => {
  killAll();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await model?.close();
});

const modelEnv = () => ({ ...endpointEnv(model.url), ...FAST_RECOVERY });
const embeddingCalls = () => model.requests.filter((r) => r.path === '/v1/embeddings').length;

async function data() {
  const shared = await sharedData();
  cleanups.push(shared.drop);
  return shared;
}

async function createText(url: string, token: string, datastoreId: string, name: string, text: string): Promise<string> {
  const res = await gql(url, `mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id } }`, { i: { datastoreId, type: 'text', name, text } }, { token });
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.createDatasource.id;
}

/** Reads a stream's frames until the first `answer` frame, then hands the rest to `rest`. */
async function startedStream(res: Response): Promise<{ rest: Promise<string> }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let seen = '';
  while (!/event: answer|"content":"\w/.test(seen)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`The stream ended before its first answer: ${seen}`);
    seen += decoder.decode(value, { stream: true });
  }
  const rest = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return seen;
      seen += decoder.decode(value, { stream: true });
    }
  })();
  return { rest };
}

describe('SIGTERM drains the process', () => {
  it('refuses new requests with 503 at once, lets a quick stream and a job finish, ends long streams with an error naming the shutdown, exits 0', async () => {
    const shared = await data();
    const server = await startProcess({ ...shared.env, ...modelEnv(), SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    const org = await newOrganization(server.url, 'Drain');
    const store = (await gql(server.url, `mutation { createDatastore(input: { name: "S" }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
    const agent = (await gql(server.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Talker', visibility: 'private' } }, { token: org.apiKey })).data.createAgent.id;

    // A status subscription (graphql-sse), live before the signal: it sees a first document through.
    const subscription = createClient({ url: `${server.url}/graphql/stream`, headers: { authorization: `Bearer ${org.apiKey}` }, retryAttempts: 0 });
    const events: any[] = [];
    let subscriptionError: unknown = null;
    const reading = (async () => {
      try {
        for await (const event of subscription.iterate({ query: `subscription($d: ID!) { datasourceStatusChanged(datastoreId: $d) { id status } }`, variables: { d: store } })) events.push(event);
      } catch (err) {
        subscriptionError = err;
      }
    })();
    const warmUp = await createText(server.url, org.apiKey, store, 'Warm-up', 'A first document, so the subscription is known to listen.');
    await waitFor(async () => events.some((e) => e.data?.datasourceStatusChanged?.id === warmUp && e.data.datasourceStatusChanged.status === 'synched'), 30_000, 'the warm-up document');

    // A job in flight: its embedding call takes 1.5 s, well inside the grace.
    model.setDelay('/v1/embeddings', 1_500);
    const before = embeddingCalls();
    const job = await createText(server.url, org.apiKey, store, 'In flight', 'This document is being embedded when the signal arrives.');
    await waitFor(async () => embeddingCalls() > before, 20_000, 'the job to be embedding');

    // Streams in flight: a short answer (about 1 s) and long ones (about 20 s) over REST and /v1.
    model.setChatReply((body) => {
      const asked = JSON.stringify(body.messages.at(-1));
      return Array.from({ length: asked.includes('long') ? 400 : 20 }, (_, i) => `word${i}`).join(' ');
    });
    model.setStreamTiming({ tokenDelayMs: 50 });
    const ask = (query: string) =>
      fetch(`${server.api}/agents/${agent}/query`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ query, streaming: true }) });
    const [quick, long, v1] = await Promise.all([
      ask('a quick one').then(startedStream),
      ask('a long one').then(startedStream),
      fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: agent, stream: true, messages: [{ role: 'user', content: 'a long one too' }] }),
      }).then(startedStream),
    ]);

    const sent = Date.now();
    signal(server.proc.child, 'SIGTERM');
    await server.proc.waitForLog('draining', 5_000);

    // Still listening, but every new request is refused at once, readiness included.
    const refusedAt = Date.now();
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('connection')).toBe('close');
    expect(((await ready.json()) as any).error).toMatchObject({ code: 'SHUTTING_DOWN', message: expect.stringMatching(/shutting down/) });
    const query = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { id } }' }) });
    expect(query.status).toBe(503);
    expect(((await query.json()) as any).error.code).toBe('SHUTTING_DOWN');
    const rest = await fetch(`${server.api}/agents/${agent}/query`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'too late' }) });
    expect(rest.status).toBe(503);
    expect(Date.now() - refusedAt).toBeLessThan(1_000);

    // The quick stream finishes normally; the long ones end with the shutdown, once the grace is over.
    expect((await quick.rest).trimEnd().endsWith('data: [DONE]')).toBe(true);
    const longText = await long.rest;
    const longEndedAfter = Date.now() - sent;
    const frames = summarize(await readSse(new Response(longText, { headers: { 'content-type': 'text/plain' } })));
    expect(frames.last).toMatch(/^\[ERROR\]The service is shutting down/);
    expect(frames.answer.length).toBeGreaterThan(0);
    expect(longEndedAfter).toBeGreaterThanOrEqual(GRACE_MS - 200);
    expect(longEndedAfter).toBeLessThan(GRACE_MS + 3_000);
    const v1Text = await v1.rest;
    const v1Error = JSON.parse(/data: (\{"error".*)\n/.exec(v1Text)![1]!);
    expect(v1Error.error).toMatchObject({ code: 'SHUTTING_DOWN', type: 'api_error', message: expect.stringMatching(/shutting down/) });

    // The subscription saw the job finish inside the grace, then its end with the shutdown's code.
    await reading;
    subscription.dispose();
    expect(subscriptionError).toBeNull();
    expect(events.filter((e) => e.data?.datasourceStatusChanged?.id === job).map((e) => e.data.datasourceStatusChanged.status)).toEqual(['unsynched', 'running', 'synched']);
    expect(events.at(-1).errors?.[0]).toMatchObject({ extensions: { code: 'SHUTTING_DOWN' } });

    expect(await server.proc.exited).toEqual({ code: 0, signal: null });
    model.setDelay('/v1/embeddings', 0);
    model.setStreamTiming({ tokenDelayMs: 0 });
  }, 90_000);

  // One process owns the embedded database: the hand-over needs a second worker, so PostgreSQL.
  if (ON_POSTGRES) it('PostgreSQL: a job the grace cannot cover is handed back to the queue, and another worker completes it', async () => {
    const shared = await data();
    const env = { ...shared.env, ...modelEnv(), SHUTDOWN_GRACE_MS: '1000' };
    const api = await startProcess({ ...env, ROLE: 'api' });
    const first = await startProcess({ ...env, ROLE: 'worker' });
    const org = await newOrganization(api.url, 'Handback');
    const store = (await gql(api.url, `mutation { createDatastore(input: { name: "S" }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;

    model.setDelay('/v1/embeddings', 30_000);
    const before = embeddingCalls();
    const id = await createText(api.url, org.apiKey, store, 'Slow', 'Embedding this takes longer than the grace allows.');
    await waitFor(async () => embeddingCalls() > before, 20_000, 'the job to be embedding');

    const sent = Date.now();
    signal(first.proc.child, 'SIGTERM');
    expect(await first.proc.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - sent).toBeLessThan(6_000);

    // Handed back: waiting for a retry, not stuck "active" until a heartbeat expires.
    const db = new pg.Client({ connectionString: shared.databaseUrl! });
    await db.connect();
    cleanups.push(() => db.end());
    const jobs = async () => (await db.query(`select state, retry_count from pgboss.job where data->>'datasourceId' = $1`, [id])).rows;
    expect(await jobs()).toMatchObject([{ state: 'retry' }]);

    model.setDelay('/v1/embeddings', 0);
    await startProcess({ ...env, ROLE: 'worker' });
    const done = await waitFor(
      async () => {
        const ds = (await gql(api.url, `query($id: ID!) { datasource(id: $id) { status chunkCount } }`, { id }, { token: org.apiKey })).data.datasource;
        return ds.status === 'synched' ? ds : undefined;
      },
      30_000,
      'the second worker to complete the job',
    );
    expect(done.chunkCount).toBeGreaterThan(0);
    expect(await jobs()).toMatchObject([{ state: 'completed' }]); // the same job, not a new one
  }, 90_000);
});
