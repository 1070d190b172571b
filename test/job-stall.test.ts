/**
 * A job whose live worker stops making progress (JOB_STALL_SECONDS). The embeddings endpoint
 * accepts the request and never answers, and the embedder's own timeout (120 s) is far longer
 * than the 2 s stall bound, so only the progress watchdog can end the attempt: it aborts the
 * model call, the job is retried, and the datasource ends synched once the endpoint answers
 * again; while the endpoint hangs for good, the datasource ends `error` within the bound, its
 * errorMessage naming the stage it was stuck in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_QUEUE } from '../src/ingestion/datasource.service.ts';
import { JobStalled, watchJob } from '../src/queue/watchdog.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { createDatastore, datasource, settled, sql } from './support/ingest.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { endpointEnv } from './support/service.ts';
import { waitFor } from './support/wait.ts';

const STALL_SECONDS = 2;
const RETRY_LIMIT = 2;
const HANG_MS = 600_000;

let embeddings: OpenAiTestServer;
let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let store: string;

beforeAll(async () => {
  embeddings = await startOpenAiTestServer();
  app = await startTestApp({
    ...endpointEnv(embeddings.url),
    EMBEDDING_BATCH_SIZE: '2',
    JOB_STALL_SECONDS: String(STALL_SECONDS),
    JOB_RETRY_LIMIT: String(RETRY_LIMIT),
    // Long enough to read the stalled attempt's reason before the next attempt starts.
    JOB_RETRY_DELAY_SECONDS: '2',
  });
  org = await newOrganization(app.url, 'Stalled jobs');
  store = await createDatastore(app, org.apiKey);
}, 60_000);
afterAll(async () => {
  await app?.close();
  await embeddings?.close();
});

/** A few paragraphs: several chunks, so several embedding batches of 2. */
const TEXT = Array.from({ length: 4 }, (_, p) => `Part ${p} of the stalled document. ${'It explains one more thing in plain words. '.repeat(30)}`).join('\n\n');
const STUCK = new RegExp(`^No progress for ${STALL_SECONDS} s while embedding chunks 1-2 of \\d+\\.$`);

const createText = async (name: string) => {
  const res = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'text', name, text: TEXT } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as string;
};
const jobOf = async (id: string) => (await sql<{ state: string; retry_count: number }>(app, `select state, retry_count from pgboss.job where name = ? and data->>'datasourceId' = ?`, [INGEST_QUEUE, id]))[0];
const embeddingCalls = () => embeddings.requests.filter((r) => r.path === '/v1/embeddings').length;

describe(`a job that makes no progress for JOB_STALL_SECONDS (${STALL_SECONDS} s) is aborted and retried`, () => {
  it('the endpoint hangs, then answers again: the retried job ends synched', async () => {
    embeddings.setDelay('/v1/embeddings', HANG_MS);
    const calls = embeddingCalls();
    const id = await createText('Recovers');
    await waitFor(async () => embeddingCalls() > calls || undefined, 15_000, 'the first embedding request');
    // The watchdog gives up the first attempt; until the next one starts, the datasource says why.
    const waiting = await waitFor(async () => {
      const ds = await datasource(app, org.apiKey, id);
      return ds?.errorMessage ? ds : undefined;
    }, 10_000, 'the stalled attempt to be given up');
    expect(waiting).toMatchObject({ status: 'running', errorMessage: expect.stringMatching(STUCK) });
    // Its job is failed and waits for its retry (the reason is written just before).
    await waitFor(async () => (await jobOf(id))?.state === 'retry' || undefined, 5000, 'the job to wait for its retry');
    embeddings.setDelay('/v1/embeddings', 0);

    const done = await settled(app, org.apiKey, id, 20_000);
    expect(done).toMatchObject({ status: 'synched', errorMessage: null });
    expect(done.chunkCount).toBeGreaterThan(2);
    const [chunks] = await sql(app, 'select count(*)::int as n, count(distinct position)::int as positions from chunks where datasource_id = ?', [id]);
    expect(chunks).toEqual({ n: done.chunkCount, positions: done.chunkCount });
  }, 40_000);

  it('the endpoint hangs for good: the datasource ends error within the bound, saying where it was stuck; nothing is left open', async () => {
    embeddings.setDelay('/v1/embeddings', HANG_MS);
    const started = Date.now();
    const id = await createText('Never answered');
    const failed = await settled(app, org.apiKey, id, 30_000);
    const seconds = (Date.now() - started) / 1000;
    expect(failed.status).toBe('error');
    expect(failed.errorMessage).toMatch(STUCK);
    // Each attempt ends within 1.1 × JOB_STALL_SECONDS of its last progress; the retries wait 2 s, then 4 s (backoff).
    const bound = (RETRY_LIMIT + 1) * STALL_SECONDS * 1.1 + 2 + 4;
    expect(seconds).toBeLessThan(bound + 10); // + job polling and a loaded machine's slack; pg-boss's own bound would be 15 minutes
    // Every attempt was made; the last one recorded the failure on the datasource (its job then completed).
    expect((await jobOf(id))?.retry_count).toBe(RETRY_LIMIT);
    // Each aborted attempt closed its request: the model call was cancelled, not left hanging for the embedder's 120 s.
    await waitFor(async () => embeddings.openConnections() === 0 || undefined, 5000, 'the hung requests to be closed');

    const problems = await gql(app.url, `query { datasourceProblems(first: 10) { nodes { id reason stuck } } }`, {}, { token: org.apiKey });
    expect(problems.data.datasourceProblems.nodes).toContainEqual({ id, reason: failed.errorMessage, stuck: false });
    // Retried by a person once the endpoint answers again: synched.
    embeddings.setDelay('/v1/embeddings', 0);
    expect((await gql(app.url, `mutation($ids: [ID!]) { retryDatasources(ids: $ids) { id status } }`, { ids: [id] }, { token: org.apiKey })).data.retryDatasources).toEqual([{ id, status: 'pending' }]);
    expect(await settled(app, org.apiKey, id, 20_000)).toMatchObject({ status: 'synched', errorMessage: null });
    expect((await datasource(app, org.apiKey, id))?.chunkCount).toBeGreaterThan(2);
  }, 40_000);
});

describe('the watchdog (src/queue/watchdog.ts)', () => {
  it('releases work that ignores its abort, names the last stage, and leaves progressing work alone', async () => {
    const stuck = watchJob(200);
    stuck.step('waiting for something that never comes');
    const ignoring = new Promise<never>(() => {}); // heeds no signal
    const outcome = await stuck.guard(ignoring).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(JobStalled);
    expect((outcome as Error).message).toBe('No progress for 0.2 s while waiting for something that never comes.');
    expect(stuck.signal.aborted).toBe(true);
    expect(stuck.signal.reason).toBe(outcome);

    const busy = watchJob(300);
    let steps = 0;
    const working = (async () => {
      for (; steps < 10; steps++) {
        busy.step(`step ${steps}`);
        await new Promise((r) => setTimeout(r, 100)); // 1 s in all, never 300 ms without progress
      }
      return 'done';
    })();
    expect(await busy.guard(working)).toBe('done');
    expect(busy.signal.aborted).toBe(false);
    busy.stop();
  });
});
