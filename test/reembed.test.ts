/**
 * Changing a datastore's embedding model, as an operator would: a datastore on the shipped local
 * model (512 dimensions) moves to a model of the OpenAI-compatible endpoint (64 dimensions here)
 * and back. Progress shows on the datastore and on the subscription; queries answer from the old
 * vectors until the switch and from the new model after it; a failing endpoint leaves the old
 * model in place with the reason shown; bad input is refused and changes nothing.
 */
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeChunks } from '../src/ingestion/chunk.store.ts';
import { Datasource, DatasourceStatus, DatasourceType } from '../src/ingestion/datasource.entity.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { createDatastore, settled, sql } from './support/ingest.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { waitFor } from './support/wait.ts';

const ENDPOINT_DIMENSION = 64;
const ENDPOINT_MODEL = 'text-embedding-ada-002';
const DOCS = {
  lighthouse: 'The lighthouse keeper polishes the great lens every evening before the ships pass the rocky cape.',
  bread: 'Sourdough bread needs flour, water, salt and a lively starter; the dough rises overnight in a cool kitchen.',
  warranty: 'Our warranty covers the espresso machine for seven years, including the pump and the boiler.',
};
const DATASTORE_FIELDS = 'id name embeddingModel embeddingDimension pendingEmbeddingModel pendingEmbeddingDimension reembedProgress reembedError';

let server: OpenAiTestServer;
let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let store: string;

beforeAll(async () => {
  server = await startOpenAiTestServer({ embeddingDimension: ENDPOINT_DIMENSION });
  app = await startTestApp({ OPENAI_BASE_URL: server.url, JOB_RETRY_DELAY_SECONDS: '1' });
  org = await newOrganization(app.url, 'Re-embedding');
  store = await createDatastore(app, org.apiKey);
  for (const [name, text] of Object.entries(DOCS)) await settled(app, org.apiKey, await addText(name, text));
}, 180_000);

afterAll(async () => {
  await app?.close();
  await server?.close();
});

async function addText(name: string, text: string): Promise<string> {
  const res = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'text', name, text } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as string;
}

async function datastore(id = store): Promise<Record<string, any>> {
  const res = await gql(app.url, `query($id: ID!) { datastore(id: $id) { ${DATASTORE_FIELDS} } }`, { id }, { token: org.apiKey });
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.datastore;
}

function update(input: Record<string, unknown>, target = app) {
  return gql(target.url, `mutation($id: ID!, $i: UpdateDatastoreInput!) { updateDatastore(id: $id, input: $i) { ${DATASTORE_FIELDS} } }`, { id: store, i: input }, { token: org.apiKey });
}

async function query(text: string): Promise<{ text: string; score: number }[]> {
  const res = await gql(app.url, `query($id: ID!, $i: DatastoreQueryInput!) { datastoreQuery(id: $id, input: $i) { text score } }`, { id: store, i: { query: text, topK: 3 } }, { token: org.apiKey });
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.datastoreQuery;
}

/** Embedding requests the endpoint received whose input contains `text`. */
function endpointEmbedded(text: string): number {
  return server.requests.filter((r) => r.path.endsWith('/embeddings') && JSON.stringify(r.body?.input ?? '').includes(text)).length;
}

async function chunkDimensions(): Promise<{ dimension: number; pending: number; n: number }[]> {
  return sql(app, 'select dimension, count(embedding_next)::int as pending, count(*)::int as n from chunks where datastore_id = ? group by dimension order by dimension', [store]);
}

/** Events of the subscription, collected from when it is opened. */
function subscribe(): { events: Record<string, any>[]; client: Client } {
  const client = createClient({ url: `${app.url}/graphql/stream`, headers: { authorization: `Bearer ${org.apiKey}` } });
  const events: Record<string, any>[] = [];
  void (async () => {
    for await (const event of client.iterate({ query: `subscription($d: ID!) { datastoreEmbeddingChanged(datastoreId: $d) { datastoreId embeddingModel embeddingDimension pendingEmbeddingModel reembedProgress reembedError at } }`, variables: { d: store } })) {
      events.push((event.data as any).datastoreEmbeddingChanged);
    }
  })().catch(() => {});
  return { events, client };
}

/** Lets the subscription's LISTEN reach the server before the change it is to see. */
const settle = () => new Promise((r) => setTimeout(r, 500));

describe('changing the embedding model', () => {
  it('starts on the local model: 512-dimension vectors, nothing pending', async () => {
    expect(await datastore()).toMatchObject({ embeddingModel: 'local/universal-sentence-encoder', embeddingDimension: 512, pendingEmbeddingModel: null, reembedProgress: null, reembedError: null });
    expect(await chunkDimensions()).toEqual([{ dimension: 512, pending: 0, n: 3 }]);
    expect((await query('how long is the espresso machine warranty'))[0]!.text).toContain('espresso machine');
  });

  it('re-embeds with the endpoint model in the background, answering from the old vectors until the switch', async () => {
    const sub = subscribe();
    await settle();
    // Slow embeddings keep the change under way long enough to query during it.
    server.setDelay('/v1/embeddings', 2500);
    try {
      const res = await update({ embeddingModel: ENDPOINT_MODEL });
      expect(res.errors).toBeUndefined();
      expect(res.data.updateDatastore).toMatchObject({
        embeddingModel: 'local/universal-sentence-encoder',
        embeddingDimension: 512,
        pendingEmbeddingModel: `openai/${ENDPOINT_MODEL}`,
        pendingEmbeddingDimension: ENDPOINT_DIMENSION,
        reembedProgress: 0,
      });

      // During the change: answered by the local model from the old vectors; the endpoint sees no query.
      const during = 'which bread rises overnight';
      expect((await query(during))[0]!.text).toContain('Sourdough');
      expect(endpointEmbedded(during)).toBe(0);
      expect((await datastore()).pendingEmbeddingModel).toBe(`openai/${ENDPOINT_MODEL}`);
      // A document added during the change is embedded by the new model too before the switch.
      const late = await addText('late', 'Penguins in the zoo are fed herring twice a day by the keepers.');
      await settled(app, org.apiKey, late);
    } finally {
      server.setDelay('/v1/embeddings', 0);
    }

    const done = await waitFor(async () => {
      const d = await datastore();
      return d.pendingEmbeddingModel === null && d;
    }, 60_000, 'the switch');
    expect(done).toMatchObject({ embeddingModel: `openai/${ENDPOINT_MODEL}`, embeddingDimension: ENDPOINT_DIMENSION, reembedProgress: 1, reembedError: null });
    expect(await chunkDimensions()).toEqual([{ dimension: ENDPOINT_DIMENSION, pending: 0, n: 4 }]);

    // The subscription saw the progress reach 1 and the switch.
    const events = await waitFor(async () => sub.events.some((e) => e.pendingEmbeddingModel === null) && sub.events, 10_000, 'the switch event');
    sub.client.dispose();
    expect(events.every((e) => e.datastoreId === store)).toBe(true);
    const progress = events.map((e) => e.reembedProgress);
    expect(progress.at(-1)).toBe(1);
    expect(progress.filter((p) => p !== null)).toEqual([...progress.filter((p) => p !== null)].sort((a, b) => a - b));
    expect(events.at(-1)).toMatchObject({ embeddingModel: `openai/${ENDPOINT_MODEL}`, embeddingDimension: ENDPOINT_DIMENSION, pendingEmbeddingModel: null });

    // After the switch: the endpoint embeds the query, and the late document is found.
    const after = 'how long does the warranty of the espresso machine last';
    expect((await query(after))[0]!.text).toContain('espresso machine');
    expect(endpointEmbedded(after)).toBe(1);
    expect((await query('penguins fed herring'))[0]!.text).toContain('Penguins');
  }, 120_000);

  it('asking for the model in use is a no-op', async () => {
    const before = server.requests.length;
    const res = await update({ embeddingModel: ENDPOINT_MODEL });
    expect(res.errors).toBeUndefined();
    expect(res.data.updateDatastore).toMatchObject({ embeddingModel: `openai/${ENDPOINT_MODEL}`, pendingEmbeddingModel: null, reembedProgress: 1 });
    // Not even a probe of the endpoint.
    expect(server.requests.length).toBe(before);
  });

  it('refuses an unknown model and a local model that does not exist, changing nothing', async () => {
    const before = await datastore();
    for (const embeddingModel of ['no-such-embedding-model', 'local/bigger-model', '']) {
      const res = await update({ name: 'Renamed', embeddingModel });
      expect(res.errors?.[0]?.extensions.code, embeddingModel).toBe('BAD_USER_INPUT');
      expect(JSON.stringify(res.errors?.[0]?.extensions), embeddingModel).toContain('embeddingModel');
    }
    // An endpoint that cannot be asked is its failure, not the user's: 502, and nothing written either.
    server.failNext('/v1/models', 503);
    const down = await update({ name: 'Renamed', embeddingModel: 'text-embedding-3-small' });
    expect(down.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_FAILED', details: { field: 'embeddingModel' } });
    expect(await datastore()).toEqual(before);
  });

  it('changes back to the local model; the endpoint no longer sees queries', async () => {
    const res = await update({ embeddingModel: 'local' });
    expect(res.data.updateDatastore).toMatchObject({ pendingEmbeddingModel: 'local/universal-sentence-encoder', pendingEmbeddingDimension: 512 });
    const done = await waitFor(async () => {
      const d = await datastore();
      return d.pendingEmbeddingModel === null && d;
    }, 60_000, 'the switch back');
    expect(done).toMatchObject({ embeddingModel: 'local/universal-sentence-encoder', embeddingDimension: 512, reembedProgress: 1, reembedError: null });
    expect(await chunkDimensions()).toEqual([{ dimension: 512, pending: 0, n: 4 }]);
    const text = 'which lens does the lighthouse keeper polish';
    expect((await query(text))[0]!.text).toContain('lighthouse');
    expect(endpointEmbedded(text)).toBe(0);
  }, 120_000);

  it('asking for the model in use during a change cancels it: nothing of it is kept', async () => {
    server.setDelay('/v1/embeddings', 1500);
    try {
      const res = await update({ embeddingModel: ENDPOINT_MODEL });
      expect(res.data.updateDatastore.pendingEmbeddingModel).toBe(`openai/${ENDPOINT_MODEL}`);
      const cancelled = await update({ embeddingModel: 'local' });
      expect(cancelled.errors).toBeUndefined();
      expect(cancelled.data.updateDatastore).toMatchObject({ embeddingModel: 'local/universal-sentence-encoder', pendingEmbeddingModel: null, reembedProgress: null });
      // The job's batch in flight comes back after the cancel and must not be stored.
      await new Promise((r) => setTimeout(r, 2500));
    } finally {
      server.setDelay('/v1/embeddings', 0);
    }
    expect(await datastore()).toMatchObject({ embeddingModel: 'local/universal-sentence-encoder', embeddingDimension: 512, pendingEmbeddingModel: null, reembedProgress: null, reembedError: null });
    expect(await chunkDimensions()).toEqual([{ dimension: 512, pending: 0, n: 4 }]);
  }, 60_000);

  it('a failing endpoint leaves the old vectors and model in use, with the reason shown', async () => {
    const sub = subscribe();
    await settle();
    // The probe of the model passes; the job's first embedding call, held back until then, is refused.
    server.setDelay('/v1/embeddings', 500);
    try {
      const res = await update({ embeddingModel: ENDPOINT_MODEL });
      expect(res.data.updateDatastore.pendingEmbeddingModel).toBe(`openai/${ENDPOINT_MODEL}`);
      server.failNext('/v1/embeddings', 400, 1, { error: { message: 'This model is switched off.', type: 'invalid_request_error', param: null, code: null } });
      const failed = await waitFor(async () => {
        const d = await datastore();
        return d.pendingEmbeddingModel === null && d;
      }, 60_000, 'the failure');
      expect(failed).toMatchObject({ embeddingModel: 'local/universal-sentence-encoder', embeddingDimension: 512, reembedProgress: null });
      expect(failed.reembedError).toContain('This model is switched off.');
    } finally {
      server.setDelay('/v1/embeddings', 0);
    }
    expect(await chunkDimensions()).toEqual([{ dimension: 512, pending: 0, n: 4 }]);
    expect((await query('which bread rises overnight'))[0]!.text).toContain('Sourdough');
    const events = await waitFor(async () => sub.events.some((e) => e.reembedError) && sub.events, 10_000, 'the failure event');
    sub.client.dispose();
    expect(events.at(-1)).toMatchObject({ embeddingModel: 'local/universal-sentence-encoder', pendingEmbeddingModel: null, reembedProgress: null });
    expect(events.at(-1)!.reembedError).toContain('This model is switched off.');
  }, 120_000);
});

describe('ingestion across a switch', () => {
  it('chunks embedded by a model the datastore switched away from are not stored (the job then embeds again)', async () => {
    const other = await createDatastore(app, org.apiKey, 'private', 'Switch guard');
    const em = app.db.orm.em.fork();
    const ds = em.create(Datasource, { organization: org.organizationId, datastore: other, type: DatasourceType.text, name: 'guarded', content: 'text', status: DatasourceStatus.pending } as never);
    await em.flush();
    const { datasources } = app.services;
    const run = (await datasources.markRunning(em, ds))!;
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `piece ${i}`, position: i, page: null, embedding: Array.from({ length: 512 }, (_, j) => (j === i % 512 ? 1 : 0)), metadata: {} }));
    const done = { tokenCount: 1, hash: 'h', name: null, status: datasources.statusWrite(ds, run, DatasourceStatus.synched, { chunkCount: 1 }) };
    const target = (embeddingModel: string) => ({ datasourceId: ds.id, datastoreId: other, customId: null, dimension: 512, embeddingModel });
    // Both ways of storing: one statement (up to 500 chunks) and a transaction of batches.
    for (const n of [2, 501]) {
      expect(await storeChunks(em, target('openai/the-old-model'), rows(n), done), `${n} chunks`).toBe(false);
      expect(await sql(app, 'select count(*)::int as n from chunks where datasource_id = ?', [ds.id])).toEqual([{ n: 0 }]);
    }
    expect(await storeChunks(em, target('local/universal-sentence-encoder'), rows(2), done)).toBe(true);
    expect(await sql(app, 'select count(*)::int as n from chunks where datasource_id = ?', [ds.id])).toEqual([{ n: 2 }]);
  });
});

describe('without an embeddings endpoint', () => {
  let plain: TestApp;
  beforeAll(async () => {
    plain = await startTestApp();
  }, 120_000);
  afterAll(async () => {
    await plain?.close();
  });

  it('only "local" is a model: an endpoint model is refused naming the field, and "local" is a no-op', async () => {
    const owner = await newOrganization(plain.url, 'No endpoint');
    const id = await createDatastore(plain, owner.apiKey);
    const change = (embeddingModel: string) =>
      gql(plain.url, `mutation($id: ID!, $i: UpdateDatastoreInput!) { updateDatastore(id: $id, input: $i) { ${DATASTORE_FIELDS} } }`, { id, i: { embeddingModel } }, { token: owner.apiKey });
    const refused = await change(ENDPOINT_MODEL);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { field: 'embeddingModel' } });
    expect(refused.errors?.[0]?.message).toContain('OPENAI_BASE_URL');
    const same = await change('local');
    expect(same.errors).toBeUndefined();
    expect(same.data.updateDatastore).toMatchObject({ embeddingModel: 'local/universal-sentence-encoder', pendingEmbeddingModel: null, reembedProgress: null });
  });
});
