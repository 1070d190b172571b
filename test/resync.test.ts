/**
 * Scheduled re-sync of web content: the schedule is a pg-boss schedule (read back from pg-boss),
 * and a re-sync of a local site that changes between runs embeds only what changed, counted at
 * the OpenAI-compatible embedding endpoint. Scheduled jobs are sent to the queue directly rather
 * than waiting for cron minutes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CronExpressionParser } from 'cron-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESYNC_QUEUE } from '../src/ingestion/resync.schedules.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { endpointEnv } from './support/service.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { waitFor } from './support/wait.ts';

interface Page {
  body: string;
  etag?: string;
  lastModified?: string;
  /** Milliseconds the site takes to answer. */
  delayMs?: number;
}

let app: TestApp;
let embeddings: OpenAiTestServer;
let org: Awaited<ReturnType<typeof newOrganization>>;
let site: http.Server;
let siteUrl: string;
const pages: Record<string, Page> = {};
/** Every request the site answered: path, the conditional headers it carried, the status sent. */
const seen: { path: string; ifNoneMatch?: string; ifModifiedSince?: string; status: number }[] = [];

const sql = (query: string, params: unknown[] = []) => app.db.orm.em.getConnection().execute(query, params);

const html = (title: string, text: string) => `<html><head><title>${title}</title></head><body><article><h1>${title}</h1><p>${text}</p></article></body></html>`;
const urlset = (paths: string[]) =>
  `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths.map((p) => `<url><loc>${siteUrl}${p}</loc></url>`).join('')}</urlset>`;

/** The texts sent to the embedding endpoint so far, one per chunk embedded. */
function embeddedTexts(): string[] {
  return embeddings.requests.filter((r) => r.path === '/v1/embeddings').flatMap((r) => (Array.isArray(r.body.input) ? r.body.input : [r.body.input]));
}

async function createDatastore(resyncSchedule?: string): Promise<string> {
  const res = await gql(app.url, `mutation($i: CreateDatastoreInput!) { createDatastore(input: $i) { id } }`, { i: { name: 'Web', ...(resyncSchedule ? { resyncSchedule } : {}) } }, { token: org.apiKey });
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.createDatastore.id;
}

async function createWeb(datastoreId: string, body: Record<string, unknown>) {
  return call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId, ...body } });
}

async function read(id: string) {
  const res = await gql(app.url, `query($id: ID!) { datasource(id: $id) { id status errorMessage chunkCount lastSynch resyncSchedule nextSynchAt } }`, { id }, { token: org.apiKey });
  return res.data?.datasource;
}

const settled = (id: string, after?: string | null) =>
  waitFor(
    async () => {
      const ds = await read(id);
      return ds && ['synched', 'error'].includes(ds.status) && (!after || (ds.lastSynch && ds.lastSynch > after)) ? ds : undefined;
    },
    30_000,
    `datasource ${id} to settle`,
  );

const chunkIds = async (datasourceId: string) => ((await sql('select id from chunks where datasource_id = ? order by position', [datasourceId])) as { id: string }[]).map((r) => r.id);
const children = async (siteId: string) => (await sql(`select id, config->>'source_url' as url, last_synch, status from datasources where group_id = ? order by config->>'source_url'`, [siteId])) as { id: string; url: string; last_synch: Date; status: string }[];
const schedule = (key: string) => app.services.queue.boss.getSchedule(RESYNC_QUEUE, key);
/** What pg-boss would send when the schedule fires, sent now. */
const fire = (data: object) => app.services.queue.boss.send(RESYNC_QUEUE, data);

beforeAll(async () => {
  site = http.createServer(async (req, res) => {
    const path = req.url ?? '/';
    const page = pages[path];
    const ifNoneMatch = req.headers['if-none-match'];
    const ifModifiedSince = req.headers['if-modified-since'];
    let status = 200;
    if (!page) status = 404;
    else if ((page.etag && ifNoneMatch === page.etag) || (!page.etag && page.lastModified && ifModifiedSince === page.lastModified)) status = 304;
    seen.push({ path, ifNoneMatch, ifModifiedSince, status });
    if (page?.delayMs) await new Promise((r) => setTimeout(r, page.delayMs));
    const validators = { ...(page?.etag ? { etag: page.etag } : {}), ...(page?.lastModified ? { 'last-modified': page.lastModified } : {}) };
    if (status === 404) return void res.writeHead(404).end('not found');
    if (status === 304) return void res.writeHead(304, validators).end();
    res.writeHead(200, { 'content-type': path.endsWith('.xml') ? 'application/xml' : 'text/html; charset=utf-8', ...validators }).end(page!.body);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  embeddings = await startOpenAiTestServer();
  app = await startTestApp({
    ALLOW_PRIVATE_URLS: 'true',
    ...endpointEnv(embeddings.url),
  });
  org = await newOrganization(app.url, 'Resync');
}, 60_000);
afterAll(async () => {
  await app?.close();
  await embeddings?.close();
  site?.close();
});

describe('re-sync skips what did not change', () => {
  it('an unchanged page costs no embedding and keeps the same chunks; a changed one is re-embedded', async () => {
    const store = await createDatastore();
    pages['/plain'] = { body: html('Harbour tides', 'The harbour tide tables are published every Monday morning by the port office.') };
    const created = await createWeb(store, { type: 'web_page', config: { source_url: `${siteUrl}/plain` }, resyncSchedule: 'daily' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const first = await settled(created.body.id);
    expect(first).toMatchObject({ status: 'synched', resyncSchedule: 'daily' });
    const ids = await chunkIds(created.body.id);
    expect(ids.length).toBeGreaterThan(0);
    const before = embeddedTexts().length;

    await fire({ datasourceId: created.body.id });
    const again = await settled(created.body.id, first.lastSynch);
    expect(again.status).toBe('synched');
    expect(embeddedTexts().length).toBe(before);
    expect(await chunkIds(created.body.id)).toEqual(ids);

    pages['/plain'] = { body: html('Harbour tides', 'The harbour tide tables are now published every Friday evening by the harbour master.') };
    await gql(app.url, `mutation($id: ID!) { resyncDatasource(id: $id) { id } }`, { id: created.body.id }, { token: org.apiKey });
    await settled(created.body.id, again.lastSynch);
    const changed = embeddedTexts().slice(before);
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.join(' ')).toContain('Friday evening');
    const newIds = await chunkIds(created.body.id);
    expect(newIds.some((id) => ids.includes(id))).toBe(false);
    expect(((await sql('select text from chunks where datasource_id = ?', [created.body.id])) as { text: string }[]).map((r) => r.text).join(' ')).toContain('Friday evening');
  });

  it("a datastore's schedule re-syncs its site: only the changed page is embedded, a page gone from the sitemap goes with its chunks", async () => {
    const store = await createDatastore('weekly');
    const paths = ['/docs/a', '/docs/b', '/docs/c'];
    const text = (p: string, v: string) => html(`Page ${p}`, `This documentation page ${p} explains topic ${p.slice(-1)} in version ${v} of the manual.`);
    for (const p of paths) pages[p] = { body: text(p, 'one') };
    pages['/docs/sitemap.xml'] = { body: urlset(paths) };
    const created = await createWeb(store, { type: 'web_site', config: { sitemap: `${siteUrl}/docs/sitemap.xml` } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    await settled(created.body.id);
    await waitFor(async () => {
      const list = await children(created.body.id);
      return list.length === 3 && list.every((c) => c.status === 'synched');
    }, 60_000, 'the pages to synch');
    const [a, b, c] = await children(created.body.id);
    const idsOf = { a: await chunkIds(a!.id), b: await chunkIds(b!.id), c: await chunkIds(c!.id) };
    const before = embeddedTexts().length;

    pages['/docs/b'] = { body: text('/docs/b', 'two') };
    pages['/docs/sitemap.xml'] = { body: urlset(paths.slice(0, 2)) };
    await fire({ datastoreId: store });
    await waitFor(async () => {
      const list = await children(created.body.id);
      return list.length === 2 && list.every((p) => p.status === 'synched' && p.last_synch > a!.last_synch) ? list : undefined;
    }, 60_000, 'the pages to be re-synched');

    const embedded = embeddedTexts().slice(before);
    expect(embedded.length).toBeGreaterThan(0);
    expect(embedded.every((t) => t.includes('/docs/b'))).toBe(true);
    expect(embedded.join(' ')).toContain('version two');
    expect(await chunkIds(a!.id)).toEqual(idsOf.a);
    expect((await chunkIds(b!.id)).some((id) => idsOf.b.includes(id))).toBe(false);
    expect(await chunkIds(c!.id)).toEqual([]);
    expect(await sql('select count(*)::int as n from datasources where id = ?', [c!.id])).toEqual([{ n: 0 }]);

    const datastore = await gql(app.url, `query($id: ID!) { datastore(id: $id) { resyncSchedule lastSynch nextSynchAt } }`, { id: store }, { token: org.apiKey });
    expect(datastore.data.datastore.resyncSchedule).toBe('weekly');
    expect(datastore.data.datastore.lastSynch).not.toBeNull();
    expect(new Date(datastore.data.datastore.nextSynchAt).getTime()).toBeGreaterThan(Date.now());
  }, 120_000);

  it('sends If-None-Match and If-Modified-Since from what the site sent; a 304 counts as unchanged', async () => {
    const store = await createDatastore();
    const lastModified = 'Wed, 21 Oct 2026 07:28:00 GMT';
    pages['/tagged'] = { body: html('Ferry times', 'The first ferry leaves the north pier at six in the morning.'), etag: '"v1"', lastModified };
    pages['/dated'] = { body: html('Bridge hours', 'The swing bridge opens for boats every two hours during summer.'), lastModified };
    const tagged = (await createWeb(store, { type: 'web_page', config: { source_url: `${siteUrl}/tagged` }, resyncSchedule: 'daily' })).body.id as string;
    const dated = (await createWeb(store, { type: 'web_page', config: { source_url: `${siteUrl}/dated` }, resyncSchedule: '0 6 * * 1' })).body.id as string;
    const firstTagged = await settled(tagged);
    const firstDated = await settled(dated);
    const ids = { tagged: await chunkIds(tagged), dated: await chunkIds(dated) };
    const before = embeddedTexts().length;

    await fire({ datasourceId: tagged });
    await fire({ datasourceId: dated });
    expect(await settled(tagged, firstTagged.lastSynch)).toMatchObject({ status: 'synched' });
    expect(await settled(dated, firstDated.lastSynch)).toMatchObject({ status: 'synched' });
    expect(seen.filter((r) => r.path === '/tagged').at(-1)).toEqual({ path: '/tagged', ifNoneMatch: '"v1"', ifModifiedSince: lastModified, status: 304 });
    expect(seen.filter((r) => r.path === '/dated').at(-1)).toEqual({ path: '/dated', ifNoneMatch: undefined, ifModifiedSince: lastModified, status: 304 });
    expect(embeddedTexts().length).toBe(before);
    expect(await chunkIds(tagged)).toEqual(ids.tagged);
    expect(await chunkIds(dated)).toEqual(ids.dated);

    // A new version: the old validator no longer matches, the page comes back whole and is embedded.
    pages['/tagged'] = { body: html('Ferry times', 'The first ferry now leaves the south pier at seven in the morning.'), etag: '"v2"' };
    const second = await read(tagged);
    await fire({ datasourceId: tagged });
    await settled(tagged, second.lastSynch);
    expect(seen.filter((r) => r.path === '/tagged').at(-1)).toMatchObject({ ifNoneMatch: '"v1"', status: 200 });
    expect(embeddedTexts().slice(before).join(' ')).toContain('south pier');
    expect(await sql('select etag, last_modified from datasources where id = ?', [tagged])).toEqual([{ etag: '"v2"', last_modified: null }]);
  });
});

describe('the schedule', () => {
  it('is registered with pg-boss, follows updateDatasource, shows nextSynchAt, and goes with the datasource', async () => {
    const store = await createDatastore();
    pages['/scheduled'] = { body: html('Lighthouse', 'The lighthouse museum is open on weekends.') };
    const created = await gql(
      app.url,
      `mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id resyncSchedule nextSynchAt } }`,
      { i: { datastoreId: store, type: 'web_page', config: { source_url: `${siteUrl}/scheduled` }, resyncSchedule: 'daily' } },
      { token: org.apiKey },
    );
    const { id, nextSynchAt } = created.data.createDatasource;
    const daily = await schedule(`datasource/${id}`);
    expect(daily).toMatchObject({ name: RESYNC_QUEUE, data: { datasourceId: id } });
    expect(daily!.cron).toMatch(/^\d{1,2} \d{1,2} \* \* \*$/);
    expect(new Date(nextSynchAt).toISOString()).toBe(CronExpressionParser.parse(daily!.cron, { tz: 'UTC' }).next().toDate().toISOString());

    const update = (resyncSchedule: string) =>
      gql(app.url, `mutation($id: ID!, $i: UpdateDatasourceInput!) { updateDatasource(id: $id, input: $i) { resyncSchedule nextSynchAt } }`, { id, i: { resyncSchedule } }, { token: org.apiKey });
    const every = await update(' */30  * * * 1-5 ');
    expect(every.data.updateDatasource.resyncSchedule).toBe('*/30 * * * 1-5');
    expect(new Date(every.data.updateDatasource.nextSynchAt).getUTCMinutes() % 30).toBe(0);
    expect((await schedule(`datasource/${id}`))!.cron).toBe('*/30 * * * 1-5');

    const off = await update('none');
    expect(off.data.updateDatasource).toEqual({ resyncSchedule: 'none', nextSynchAt: null });
    expect(await schedule(`datasource/${id}`)).toBeNull();

    await update('weekly');
    expect((await schedule(`datasource/${id}`))!.cron).toMatch(/^\d{1,2} \d{1,2} \* \* [0-6]$/);
    await settled(id);
    expect((await gql(app.url, `mutation($id: ID!) { deleteDatasource(id: $id) { id } }`, { id }, { token: org.apiKey })).data).toBeTruthy();
    expect(await schedule(`datasource/${id}`)).toBeNull();
  });

  it('changing the schedule or name while the page is being read does not take the run away from its worker', async () => {
    const store = await createDatastore();
    pages['/slow'] = { body: html('Slow page', 'The slow page takes a while to answer every request.'), delayMs: 1500 };
    const id = (await createWeb(store, { type: 'web_page', config: { source_url: `${siteUrl}/slow` } })).body.id as string;
    await waitFor(async () => (await read(id))?.status === 'running', 20_000, 'the page to be read');
    const res = await gql(app.url, `mutation($id: ID!) { updateDatasource(id: $id, input: { name: "Slow", resyncSchedule: "daily" }) { name resyncSchedule status } }`, { id }, { token: org.apiKey });
    expect(res.data.updateDatasource).toEqual({ name: 'Slow', resyncSchedule: 'daily', status: 'running' });
    expect(await settled(id)).toMatchObject({ status: 'synched', chunkCount: 1 });
  });

  it("a datastore's schedule follows updateDatastore and goes with the datastore, its datasources' too", async () => {
    const store = await createDatastore('daily');
    expect(await schedule(`datastore/${store}`)).toMatchObject({ data: { datastoreId: store } });
    const updated = await gql(app.url, `mutation($id: ID!) { updateDatastore(id: $id, input: { resyncSchedule: "0 4 * * *" }) { resyncSchedule nextSynchAt } }`, { id: store }, { token: org.apiKey });
    expect(updated.data.updateDatastore.resyncSchedule).toBe('0 4 * * *');
    expect(new Date(updated.data.updateDatastore.nextSynchAt).toISOString()).toMatch(/T04:00:00\.000Z$/);
    expect((await schedule(`datastore/${store}`))!.cron).toBe('0 4 * * *');

    pages['/in-store'] = { body: html('Pier', 'The pier is closed for repairs until spring.') };
    const page = (await createWeb(store, { type: 'web_page', config: { source_url: `${siteUrl}/in-store` }, resyncSchedule: 'weekly' })).body.id as string;
    expect(await schedule(`datasource/${page}`)).not.toBeNull();
    await settled(page);
    expect((await gql(app.url, `mutation($id: ID!) { deleteDatastore(id: $id) { id } }`, { id: store }, { token: org.apiKey })).data).toBeTruthy();
    expect(await schedule(`datastore/${store}`)).toBeNull();
    expect(await schedule(`datasource/${page}`)).toBeNull();
  });

  it('a schedule whose row is gone removes itself when it fires', async () => {
    const gone = '01a20258-07dc-7d9b-9f4d-0df70fdea414';
    await app.services.queue.boss.schedule(RESYNC_QUEUE, '0 0 * * *', { datasourceId: gone }, { key: `datasource/${gone}` });
    await fire({ datasourceId: gone });
    await waitFor(async () => (await schedule(`datasource/${gone}`)) === null || undefined, 20_000, 'the orphan schedule to go');
  });

  it('a malformed schedule is BAD_USER_INPUT naming the field, and changes nothing', async () => {
    const store = await createDatastore();
    const count = async () => (await sql('select count(*)::int as n from datasources'))[0].n as number;
    const schedules = async () => (await app.services.queue.boss.getSchedules(RESYNC_QUEUE)).length;
    const [rows, registered] = [await count(), await schedules()];

    for (const bad of ['every day', '61 * * * *', '0 0 * * * *', '@daily', '* * 32 * *', '']) {
      const rest = await createWeb(store, { type: 'web_page', config: { source_url: `${siteUrl}/plain` }, resyncSchedule: bad });
      expect(rest.status, `${bad}: ${JSON.stringify(rest.body)}`).toBe(400);
      expect(rest.body.error).toMatchObject({ code: 'BAD_USER_INPUT', details: { field: 'resyncSchedule' } });
    }
    const text = await createWeb(store, { type: 'text', name: 'Notes', text: 'Some notes.', resyncSchedule: 'daily' });
    expect(text.status).toBe(400);
    expect(text.body.error.details.field).toBe('resyncSchedule');
    expect(await count()).toBe(rows);

    const page = (await createWeb(store, { type: 'web_page', config: { source_url: `${siteUrl}/plain` }, resyncSchedule: 'daily' })).body.id as string;
    const cron = (await schedule(`datasource/${page}`))!.cron;
    const bad = await gql(app.url, `mutation($id: ID!) { updateDatasource(id: $id, input: { name: "Renamed", resyncSchedule: "99 * * * *" }) { id } }`, { id: page }, { token: org.apiKey });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { field: 'resyncSchedule' } });
    expect(await read(page)).toMatchObject({ resyncSchedule: 'daily' });
    expect((await sql('select name from datasources where id = ?', [page]))[0].name).not.toBe('Renamed');
    expect((await schedule(`datasource/${page}`))!.cron).toBe(cron);

    const badStore = await gql(app.url, `mutation($id: ID!) { updateDatastore(id: $id, input: { name: "Renamed", resyncSchedule: "daily at noon" }) { id } }`, { id: store }, { token: org.apiKey });
    expect(badStore.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { field: 'resyncSchedule' } });
    const after = await gql(app.url, `query($id: ID!) { datastore(id: $id) { name resyncSchedule nextSynchAt } }`, { id: store }, { token: org.apiKey });
    expect(after.data.datastore).toEqual({ name: 'Web', resyncSchedule: 'none', nextSynchAt: null });
    expect(await schedules()).toBe(registered + 1);
    await settled(page);
  });
});
