/**
 * What a caller notices of how query texts are embedded: concurrent queries on the local model
 * (embedded together in one model run) each get the fragments of their own question, the same
 * as when asked alone; the vector of a repeated question is reused instead of asking the
 * embeddings endpoint again, but never for a datastore of another model; EMBEDDING_QUERY_CACHE=0
 * turns that off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { createDatastore, settled } from './support/ingest.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { waitFor } from './support/wait.ts';

const TOPICS: Record<string, { text: string; question: string }> = {
  lighthouse: { text: 'The lighthouse keeper polishes the great lens every evening before the ships pass the rocky cape.', question: 'who polishes the lighthouse lens?' },
  bread: { text: 'Sourdough bread needs flour, water, salt and a lively starter; the dough rises overnight.', question: 'what does sourdough bread need?' },
  warranty: { text: 'Our warranty covers the espresso machine for seven years, including the pump and the boiler.', question: 'how long is the espresso machine warranty?' },
  orchestra: { text: 'The orchestra rehearses the symphony on Thursdays; the violins sit left of the conductor.', question: 'when does the orchestra rehearse the symphony?' },
  volcano: { text: 'The volcano erupted in spring, and ash from the crater covered the valley villages.', question: 'what covered the valley after the volcano erupted?' },
  tennis: { text: 'Tennis players serve from behind the baseline; a let is replayed when the ball clips the net.', question: 'when is a tennis serve replayed?' },
  bicycle: { text: 'Pump the bicycle tyres to the pressure printed on their side and oil the chain each month.', question: 'how often should the bicycle chain be oiled?' },
  garden: { text: 'Tomatoes in the garden need sun, deep watering twice a week, and stakes once they flower.', question: 'how often do garden tomatoes need watering?' },
};
const ENDPOINT_MODEL = 'text-embedding-3-small';

type Org = Awaited<ReturnType<typeof newOrganization>>;

async function fill(app: TestApp, org: Org, store: string, names = Object.keys(TOPICS)): Promise<void> {
  for (const name of names) {
    const res = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'text', name, text: TOPICS[name]!.text } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await settled(app, org.apiKey, res.body.id)).status).toBe('synched');
  }
}

async function ask(app: TestApp, org: Org, store: string, query: string): Promise<{ datasource_name: string; score: number }[]> {
  const res = await call('POST', `${app.api}/datastores/${store}/query`, { token: org.apiKey, body: { query, topK: 3 } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('concurrent queries on the local model', () => {
  let app: TestApp;
  let org: Org;
  let store: string;

  beforeAll(async () => {
    // No cache: every query below is embedded, alone or with the others.
    app = await startTestApp({ EMBEDDING_QUERY_CACHE: '0' });
    org = await newOrganization(app.url, 'Concurrent queries');
    store = await createDatastore(app, org.apiKey);
    await fill(app, org, store);
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  });

  it('are each answered with the fragments of their own question, as when asked alone', async () => {
    const names = Object.keys(TOPICS);
    const together = await Promise.all(names.map((name) => ask(app, org, store, TOPICS[name]!.question)));
    const alone: Awaited<ReturnType<typeof ask>>[] = [];
    for (const name of names) alone.push(await ask(app, org, store, TOPICS[name]!.question));
    names.forEach((name, i) => {
      expect(together[i]![0]!.datasource_name, TOPICS[name]!.question).toBe(name);
      // The same fragments in the same order; a score may differ in its last printed digit (the
      // model's arithmetic on a batch of texts is not bit for bit the same as on one text).
      const strip = (rows: Awaited<ReturnType<typeof ask>>) => rows.map(({ score: _score, ...rest }) => rest);
      expect(strip(together[i]!), TOPICS[name]!.question).toEqual(strip(alone[i]!));
      together[i]!.forEach((row, j) => expect(row.score, TOPICS[name]!.question).toBeCloseTo(alone[i]![j]!.score, 5));
    });
  });
});

describe('the vectors of repeated questions', () => {
  let server: OpenAiTestServer;
  let app: TestApp;
  let uncached: TestApp;
  let org: Org;
  let local: string;
  let remote: string;

  /** Embedding requests the endpoint received whose input is exactly `text` (alone, or as a list of one: the API takes both). */
  const embedded = (text: string) => server.requests.filter((r) => r.path.endsWith('/embeddings') && JSON.stringify([r.body?.input].flat()) === JSON.stringify([text])).length;

  beforeAll(async () => {
    server = await startOpenAiTestServer({ embeddingDimension: 64 });
    app = await startTestApp({ OPENAI_BASE_URL: server.url });
    org = await newOrganization(app.url, 'Repeated questions');
    local = await createDatastore(app, org.apiKey, 'private', 'Local model');
    remote = await createDatastore(app, org.apiKey, 'private', 'Endpoint model');
    const moved = await gql(app.url, `mutation($id: ID!) { updateDatastore(id: $id, input: { embeddingModel: "${ENDPOINT_MODEL}" }) { id } }`, { id: remote }, { token: org.apiKey });
    expect(moved.errors).toBeUndefined();
    // An empty datastore changes model at once, through the same job as a full one.
    await waitFor(async () => {
      const res = await gql(app.url, `query($id: ID!) { datastore(id: $id) { embeddingModel } }`, { id: remote }, { token: org.apiKey });
      return res.data?.datastore.embeddingModel === `openai/${ENDPOINT_MODEL}`;
    }, 30_000, 'the model change');
    await fill(app, org, local, ['lighthouse', 'bread', 'warranty']);
    await fill(app, org, remote, ['lighthouse', 'bread', 'warranty']);
    uncached = await startTestApp({ OPENAI_BASE_URL: server.url, EMBEDDING_QUERY_CACHE: '0', EMBEDDING_MODEL: ENDPOINT_MODEL, EMBEDDING_DIMENSION: '64' });
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await uncached?.close();
    await server?.close();
  });

  it('are embedded once per model: asked again, the endpoint is not called and the answer is the same', async () => {
    const question = 'how long does the espresso warranty last?';
    const first = await ask(app, org, remote, question);
    expect(embedded(question)).toBe(1);
    expect(first[0]!.datasource_name).toBe('warranty');
    const again = await Promise.all([ask(app, org, remote, question), ask(app, org, remote, question)]);
    expect(again).toEqual([first, first]);
    expect(embedded(question)).toBe(1);
  });

  it('a failing endpoint makes the query a 502 in its own words, and the next query works', async () => {
    server.failNext('/v1/embeddings', 401);
    const res = await call('POST', `${app.api}/datastores/${remote}/query`, { token: org.apiKey, body: { query: 'who bakes the sourdough?', topK: 3 } });
    expect(res.status).toBe(502);
    expect(res.body.error).toEqual({ code: 'UPSTREAM_FAILED', message: 'The embeddings endpoint answered 401: Incorrect API key provided.' });
    expect((await ask(app, org, remote, 'who bakes the sourdough?'))[0]!.datasource_name).toBe('bread');
  });

  it('are never served to a datastore of another model', async () => {
    const question = 'who keeps the lighthouse lens clean?';
    // The local model's vector (512 dimensions) is cached first; the endpoint's model must still be asked.
    const byLocal = await ask(app, org, local, question);
    expect(byLocal[0]!.datasource_name).toBe('lighthouse');
    expect(embedded(question)).toBe(0);
    const byEndpoint = await ask(app, org, remote, question);
    expect(embedded(question)).toBe(1);
    expect(byEndpoint[0]!.datasource_name).toBe('lighthouse');
  });

  it('are embedded every time with EMBEDDING_QUERY_CACHE=0', async () => {
    const other = await newOrganization(uncached.url, 'No cache');
    const store = await createDatastore(uncached, other.apiKey);
    await fill(uncached, other, store, ['bread']);
    const question = 'what goes into a sourdough starter?';
    for (let i = 0; i < 2; i++) expect((await ask(uncached, other, store, question))[0]!.datasource_name).toBe('bread');
    expect(embedded(question)).toBe(2);
  });
});
