/**
 * Stalled work is noticed: a datasource whose job is over or gone while it still says it is in
 * progress is failed by the sweep with its reason; a person lists failed and stuck datasources
 * with reasons (datasourceProblems) and retries them (retryDatasources).
 *
 * The jobs are put in each state through pg-boss's own API on the service's queue, as a dying
 * worker, an operator or pg-boss itself would leave them; an API-only process (no workers) keeps
 * them there for the sweep to find.
 */
import type { Job } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Datasource } from '../src/ingestion/datasource.entity.ts';
import { INGEST_QUEUE } from '../src/ingestion/datasource.service.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { createDatastore, datasource, settled, sql } from './support/ingest.ts';
import { waitFor } from './support/wait.ts';

let api: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let store: string;

beforeAll(async () => {
  api = await startTestApp({ ROLE: 'api', STALLED_SWEEP_SECONDS: '1', JOB_RETRY_DELAY_SECONDS: '1' });
  org = await newOrganization(api.url, 'Stalled');
  store = await createDatastore(api, org.apiKey);
}, 60_000);
afterAll(async () => {
  await api?.close();
});

const createText = (a: TestApp, token: string, datastoreId: string, name: string) =>
  call('POST', `${a.api}/datasources`, { token, body: { datastoreId, type: 'text', name, text: `The ${name} document. It has a sentence or two.` } }).then((r) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.id as string;
  });
const jobsOf = (a: TestApp, id: string) => sql<{ id: string; state: string }>(a, `select id, state from pgboss.job where name = ? and data->>'datasourceId' = ? order by created_on`, [INGEST_QUEUE, id]);
const errorOf = (a: TestApp, token: string, id: string) =>
  waitFor(async () => {
    const ds = await datasource(a, token, id);
    return ds?.status === 'error' ? ds : undefined;
  }, 10_000, `datasource ${id} to be failed by the sweep`);

describe('the sweep (STALLED_SWEEP_SECONDS) fails what no job will finish, with the reason', () => {
  it('a job that failed for good while its worker had the datasource running', async () => {
    const id = await createText(api, org.apiKey, store, 'Exhausted');
    const boss = api.services.queue.boss;
    // Each attempt: a worker takes the job and the datasource, then the job fails under it (4 attempts: 3 retries).
    for (let attempt = 0; attempt < 4; attempt++) {
      const job = await waitFor(async () => ((await boss.fetch(INGEST_QUEUE)) as Job[])[0], 15_000, `attempt ${attempt + 1}`);
      expect(job.data).toEqual({ datasourceId: id });
      const em = api.db.orm.em.fork();
      expect(await api.services.datasources.markRunning(em, (await em.findOneOrFail(Datasource, id, { populate: ['datastore'] })))).toBeTruthy();
      await boss.fail(INGEST_QUEUE, job.id, { message: 'The worker ran out of memory.' });
    }
    expect((await jobsOf(api, id)).map((j) => j.state)).toEqual(['failed']);
    const failed = await errorOf(api, org.apiKey, id);
    expect(failed.errorMessage).toBe('Processing stopped: its job failed after 4 attempt(s): The worker ran out of memory..');
  }, 40_000);

  it('a cancelled job, and a re-requested datasource whose jobs are gone', async () => {
    const cancelled = await createText(api, org.apiKey, store, 'Cancelled');
    await api.services.queue.boss.cancel(INGEST_QUEUE, (await jobsOf(api, cancelled))[0]!.id);
    const gone = await createText(api, org.apiKey, store, 'Gone');
    expect((await gql(api.url, `mutation($id: ID!) { resyncDatasource(id: $id) { status } }`, { id: gone }, { token: org.apiKey })).data.resyncDatasource.status).toBe('pending');
    for (const job of await jobsOf(api, gone)) await api.services.queue.boss.deleteJob(INGEST_QUEUE, job.id);

    expect((await errorOf(api, org.apiKey, cancelled)).errorMessage).toBe('Processing stopped: its job was cancelled.');
    expect((await errorOf(api, org.apiKey, gone)).errorMessage).toBe('Processing stopped: its job is gone.');
  });

  it('leaves alone a job that waits for a worker, however long, and an upload link waiting for its file', async () => {
    const waiting = await createText(api, org.apiKey, store, 'Waiting');
    await sql(api, `update datasources set updated_at = now() - interval '1 day' where id = ?`, [waiting]);
    const link = await call('POST', `${api.api}/external/datastores/file-upload/generate-link/${store}`, { token: org.apiKey, body: { type: 'text/plain' } });
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    const linked = (await sql(api, `select id from datasources where datastore_id = ? and type = 'file'`, [store]))[0].id as string;
    await sql(api, `update datasources set updated_at = now() - interval '1 day' where id = ?`, [linked]);
    await new Promise((r) => setTimeout(r, 3000)); // three sweeps
    expect((await datasource(api, org.apiKey, waiting))?.status).toBe('unsynched');
    expect((await datasource(api, org.apiKey, linked))?.status).toBe('unsynched');
  });
});

describe('datasourceProblems and retryDatasources', () => {
  let app: TestApp;
  let owner: Awaited<ReturnType<typeof newOrganization>>;
  let ds: string;
  const PROBLEMS = `query($first: Int, $after: String) { datasourceProblems(first: $first, after: $after) { nodes { id reason stuck datasource { id name status errorMessage } } pageInfo { endCursor hasNextPage } } }`;

  beforeAll(async () => {
    // Workers on, the sweep off: a stuck datasource stays listed as stuck.
    app = await startTestApp({ STALLED_SWEEP_SECONDS: '0' });
    owner = await newOrganization(app.url, 'Problems');
    ds = await createDatastore(app, owner.apiKey);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it('lists failed and stuck datasources with their reasons, newest first, in pages; retries one, then all', async () => {
    const fine = await createText(app, owner.apiKey, ds, 'Fine');
    const stuck = await createText(app, owner.apiKey, ds, 'Stuck');
    const refused = (await call('POST', `${app.api}/datasources`, { token: owner.apiKey, body: { datastoreId: ds, type: 'web_page', config: { source_url: 'http://127.0.0.1:9/' } } })).body.id as string;
    for (const id of [fine, stuck, refused]) await settled(app, owner.apiKey, id);
    // What a crash between a job's end and its write leaves: the job completed, the row still running.
    await sql(app, `update datasources set status = 'running' where id = ?`, [stuck]);

    const all = await gql(app.url, PROBLEMS, { first: 10 }, { token: owner.apiKey });
    expect(all.errors).toBeUndefined();
    expect(all.data.datasourceProblems.nodes).toEqual([
      { id: refused, stuck: false, reason: expect.stringMatching(/^Refusing to fetch .*private address/), datasource: expect.objectContaining({ id: refused, status: 'error' }) },
      { id: stuck, stuck: true, reason: 'Processing ended without a result: its job completed while the datasource was still running.', datasource: expect.objectContaining({ id: stuck, status: 'running', errorMessage: null }) },
    ]);
    const first = await gql(app.url, PROBLEMS, { first: 1 }, { token: owner.apiKey });
    expect(first.data.datasourceProblems.nodes.map((n: any) => n.id)).toEqual([refused]);
    expect(first.data.datasourceProblems.pageInfo.hasNextPage).toBe(true);
    const second = await gql(app.url, PROBLEMS, { first: 1, after: first.data.datasourceProblems.pageInfo.endCursor }, { token: owner.apiKey });
    expect(second.data.datasourceProblems.nodes.map((n: any) => n.id)).toEqual([stuck]);
    expect(second.data.datasourceProblems.pageInfo.hasNextPage).toBe(false);

    // Another organization sees none of them and retries none.
    const other = await newOrganization(app.url, 'Other');
    expect((await gql(app.url, PROBLEMS, { first: 10 }, { token: other.apiKey })).data.datasourceProblems.nodes).toEqual([]);
    const foreign = await gql(app.url, `mutation($ids: [ID!]) { retryDatasources(ids: $ids) { id } }`, { ids: [stuck] }, { token: other.apiKey });
    expect(foreign.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    // One the caller may retry beside one it cannot see: refused whole, the first one not queued either.
    const theirs = await createText(app, other.apiKey, (await gql(app.url, `mutation { createDatastore(input: { name: "Theirs" }) { id } }`, {}, { token: other.apiKey })).data.createDatastore.id, 'Theirs');
    const mixed = await gql(app.url, `mutation($ids: [ID!]) { retryDatasources(ids: $ids) { id } }`, { ids: [stuck, theirs] }, { token: owner.apiKey });
    expect(mixed.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await gql(app.url, `mutation { retryDatasources(ids: []) { id } }`, {}, { token: owner.apiKey })).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { field: 'ids' } });
    expect((await gql(app.url, PROBLEMS, { first: 10 })).errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    expect((await datasource(app, owner.apiKey, stuck))?.status).toBe('running'); // nothing changed by the refusals

    const one = await gql(app.url, `mutation($ids: [ID!]) { retryDatasources(ids: $ids) { id status } }`, { ids: [stuck] }, { token: owner.apiKey });
    expect(one.data.retryDatasources).toEqual([{ id: stuck, status: 'pending' }]);
    expect((await settled(app, owner.apiKey, stuck)).status).toBe('synched');
    expect((await gql(app.url, PROBLEMS, { first: 10 }, { token: owner.apiKey })).data.datasourceProblems.nodes.map((n: any) => n.id)).toEqual([refused]);

    const rest = await gql(app.url, `mutation { retryDatasources { id status } }`, {}, { token: owner.apiKey });
    expect(rest.data.retryDatasources).toEqual([{ id: refused, status: 'pending' }]);
    const again = await settled(app, owner.apiKey, refused);
    expect(again.status).toBe('error'); // still refused, and still says why
    expect(again.errorMessage).toMatch(/private address/);
    expect((await datasource(app, owner.apiKey, fine))?.status).toBe('synched');
  }, 60_000);
});
