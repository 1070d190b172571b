/**
 * Datastores fill themselves: every creation path of interface.md endpoints 1, 2, 3, 5 and 6,
 * processed by the real queue and workers into chunks in the real database.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, http as call, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { waitFor } from './support/wait.ts';

let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
let privateStore: string;
let publicStore: string;
let site: http.Server;
let siteUrl: string;
const pages: Record<string, string> = {};

const sql = (query: string, params: unknown[] = []) => app.db.orm.em.getConnection().execute(query, params);

async function createDatastore(token: string, visibility: 'public' | 'private') {
  const res = await gql(app.url, `mutation($i: CreateDatastoreInput!) { createDatastore(input: $i) { id } }`, { i: { name: `DS ${visibility}`, visibility } }, { token });
  return res.data.createDatastore.id as string;
}

async function datasource(id: string) {
  const res = await gql(app.url, `query($id: ID!) { datasource(id: $id) { id status errorMessage chunkCount tokenCount name type groupId } }`, { id }, { token: org.apiKey });
  return res.data?.datasource;
}

const settled = (id: string) =>
  waitFor(async () => {
    const ds = await datasource(id);
    return ds && ['synched', 'error', 'usage_limit_reached'].includes(ds.status) ? ds : undefined;
  }, 30_000, `datasource ${id} to settle`);

const chunkTexts = async (id: string) =>
  ((await sql('select text from chunks where datasource_id = ? order by position', [id])) as { text: string }[]).map((r) => r.text);

function upload(datastoreId: string, file: { name: string; type: string; data: Buffer | string }, extra: Record<string, string> = {}, token: string | null = org.apiKey, path = `/external/datastores/file-upload/${datastoreId}`) {
  const form = new FormData();
  for (const [k, v] of Object.entries(extra)) form.append(k, v);
  form.append('file', new Blob([file.data], { type: file.type }), file.name);
  return fetch(`${app.api}${path}`, { method: 'POST', body: form, headers: token ? { authorization: `Bearer ${token}` } : {} }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
}

beforeAll(async () => {
  site = http.createServer((req, res) => {
    const body = pages[req.url ?? '/'];
    if (body === undefined) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': req.url!.endsWith('.xml') ? 'application/xml' : 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  app = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', UPLOAD_MAX_BYTES: '200000' });
  org = await newOrganization(app.url, 'Ingest');
  other = await newOrganization(app.url, 'Other');
  privateStore = await createDatastore(org.apiKey, 'private');
  publicStore = await createDatastore(org.apiKey, 'public');
});
afterAll(async () => {
  await app?.close();
  site?.close();
});

describe('direct upload (endpoint 5) and POST /datasources (endpoint 6)', () => {
  it('a text file becomes chunks: unsynched, then synched with its text', async () => {
    const text = 'The quarterly report shows revenue grew by twelve percent.\n\nCustomer churn fell to three percent.';
    const res = await upload(privateStore, { name: 'report.txt', type: 'text/plain', data: text });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ type: 'file', name: 'report.txt', status: 'unsynched', groupId: null, config: {}, custom_id: null, size: Buffer.byteLength(text) });
    for (const key of ['id', 'createdAt', 'updatedAt', 'lastSynch']) expect(res.body).toHaveProperty(key);
    const done = await settled(res.body.id);
    expect(done.status).toBe('synched');
    expect(done.chunkCount).toBeGreaterThan(0);
    expect((await chunkTexts(res.body.id)).join(' ')).toContain('revenue grew by twelve percent');
    const [row] = await sql('select datastore_id, dimension, vector_dims(embedding) as dims, metadata from chunks where datasource_id = ? limit 1', [res.body.id]);
    expect(row).toMatchObject({ datastore_id: privateStore, dimension: 512, dims: 512 });
    expect(row.metadata).toMatchObject({ source: 'report.txt', datasource_name: 'report.txt' });
    // The stored vector is the model's, to float32 precision (chunk.store.ts sends it as integers, db/vector-ints.ts).
    const [stored] = await sql('select text, embedding::text as embedding from chunks where datasource_id = ? order by position limit 1', [res.body.id]);
    const [expected] = await app.services.embedder.embedDocuments([stored.text]);
    const got = JSON.parse(stored.embedding) as number[];
    expect(got).toHaveLength(expected!.length);
    expect(Math.max(...got.map((x, i) => Math.abs(Math.fround(x) - Math.fround(expected![i]!))))).toBeLessThanOrEqual(2 ** -31);
  });

  it('POST /datasources multipart keeps custom_id on the datasource and its chunks', async () => {
    const res = await upload(privateStore, { name: 'notes.md', type: 'text/markdown', data: '# Notes\n\nTenant A keeps its invoices here.' }, { type: 'file', datastoreId: privateStore, custom_id: 'tenant-a' }, org.apiKey, '/datasources');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.custom_id).toBe('tenant-a');
    expect((await settled(res.body.id)).status).toBe('synched');
    expect(await sql('select distinct custom_id from chunks where datasource_id = ?', [res.body.id])).toEqual([{ custom_id: 'tenant-a' }]);
  });

  it('refuses bad uploads with their status and leaves nothing behind', async () => {
    const before = (await sql('select count(*)::int as n from datasources'))[0].n;
    const png = await upload(privateStore, { name: 'x.png', type: 'image/png', data: Buffer.from([0x89, 0x50]) });
    expect(png.status).toBe(400);
    expect(png.body.error.message).toContain('text/csv');
    expect(png.body.error.details.supported).toContain('application/pdf');
    const big = await upload(privateStore, { name: 'big.txt', type: 'text/plain', data: 'x'.repeat(300_000) });
    expect(big.status).toBe(413);
    expect((await upload(privateStore, { name: 'a.txt', type: 'text/plain', data: 'hello' }, {}, null)).status).toBe(401);
    expect((await upload(privateStore, { name: 'a.txt', type: 'text/plain', data: 'hello' }, {}, other.apiKey)).status).toBe(404);
    expect((await upload('01a20258-07dc-7d9b-9f4d-0df70fdea414', { name: 'a.txt', type: 'text/plain', data: 'hello' })).status).toBe(404);
    const noFile = await fetch(`${app.api}/datasources`, { method: 'POST', body: (() => { const f = new FormData(); f.append('datastoreId', privateStore); return f; })(), headers: { authorization: `Bearer ${org.apiKey}` } });
    expect(noFile.status).toBe(400);
    expect((await call('POST', `${app.api}/external/datastores/file-upload/${privateStore}`, { token: org.apiKey, body: { a: 1 } })).status).toBe(415);
    expect((await sql('select count(*)::int as n from datasources'))[0].n).toBe(before);
  });
});

describe('pre-signed upload link (endpoints 1 and 2)', () => {
  it('generate-link -> PUT -> process -> synched', async () => {
    const link = await call('POST', `${app.api}/external/datastores/file-upload/generate-link/${privateStore}`, { token: org.apiKey, body: { type: 'text/csv', fileName: 'prices.csv' } });
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    expect(Object.keys(link.body).sort()).toEqual(['id', 'link']);
    expect(link.body.link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/uploads\//);

    const early = await call('POST', `${app.api}/external/datastores/file-upload/process/${privateStore}`, { token: org.apiKey, body: { id: link.body.id } });
    expect(early.status).toBe(400);

    const csv = 'product,price\n"Widget, large",12.50\nGadget,3.10\n';
    const put = await fetch(link.body.link, { method: 'PUT', body: csv, headers: { 'content-type': 'text/csv' } });
    expect(put.status).toBe(200);
    expect((await fetch(link.body.link, { method: 'PUT', body: csv, headers: { 'content-type': 'text/csv' } })).status).toBe(403);

    const processed = await call('POST', `${app.api}/external/datastores/file-upload/process/${privateStore}`, { token: org.apiKey, body: { id: link.body.id } });
    expect(processed.status, JSON.stringify(processed.body)).toBe(200);
    expect(processed.body).toMatchObject({ id: link.body.id, type: 'file', status: 'unsynched' });
    expect((await settled(link.body.id)).status).toBe('synched');
    expect((await chunkTexts(link.body.id)).join(' ')).toContain('Widget, large');

    const elsewhere = await call('POST', `${app.api}/external/datastores/file-upload/process/${publicStore}`, { token: org.apiKey, body: { id: link.body.id } });
    expect(elsewhere.status).toBe(404);
  });

  it('needs no token for a public datastore, 401 for a private one, 400 for an unsupported type', async () => {
    const open = await call('POST', `${app.api}/external/datastores/file-upload/generate-link/${publicStore}`, { body: { type: 'application/pdf' } });
    expect(open.status).toBe(200);
    expect((await call('POST', `${app.api}/external/datastores/file-upload/generate-link/${privateStore}`, { body: { type: 'application/pdf' } })).status).toBe(401);
    expect((await call('POST', `${app.api}/external/datastores/file-upload/generate-link/${privateStore}`, { token: 'ak_wrong', body: { type: 'application/pdf' } })).status).toBe(401);
    const bad = await call('POST', `${app.api}/external/datastores/file-upload/generate-link/${privateStore}`, { token: org.apiKey, body: { type: 'application/x-msdownload' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('type');
  });
});

describe('text documents (endpoint 3)', () => {
  it('an update replaces the chunks: the old text is no longer stored', async () => {
    const created = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: publicStore, type: 'text', name: 'Policy', text: 'Refunds are possible within thirty days.' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await settled(created.body.id)).status).toBe('synched');

    // Public datastore: the update needs no token (interface.md), on both paths.
    const updated = await call('POST', `${app.api}/external/datastores/update/${publicStore}`, { body: { id: created.body.id, text: 'Refunds are possible within ninety days.', name: 'Policy v2', metadata: { version: 2 } } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toEqual({ id: created.body.id });
    const done = await settled(created.body.id);
    expect(done).toMatchObject({ status: 'synched', name: 'Policy v2' });
    const texts = (await chunkTexts(created.body.id)).join(' ');
    expect(texts).toContain('ninety days');
    expect(texts).not.toContain('thirty days');

    const viaShortPath = await call('POST', `${app.api}/datastores/update/${publicStore}`, { body: { id: created.body.id, text: 'Refunds: one year.' } });
    expect(viaShortPath.status).toBe(200);
    await waitFor(async () => (await chunkTexts(created.body.id)).join(' ').includes('one year'), 20_000, 'second update');
  });

  it('refuses a missing id, empty text, and unknown documents', async () => {
    expect((await call('POST', `${app.api}/datastores/update/${publicStore}`, { body: { text: 'x' } })).status).toBe(400);
    expect((await call('POST', `${app.api}/datastores/update/${publicStore}`, { body: { id: '01a20258-07dc-7d9b-9f4d-0df70fdea414', text: 'x' } })).status).toBe(404);
    const created = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: privateStore, type: 'text', name: 'T', text: 'abc def' } });
    expect((await call('POST', `${app.api}/datastores/update/${privateStore}`, { body: { id: created.body.id, text: 'x' } })).status).toBe(401);
    expect((await call('POST', `${app.api}/datastores/update/${privateStore}`, { token: org.apiKey, body: { id: created.body.id, text: '   ' } })).status).toBe(400);
  });
});

describe('web pages and sites', () => {
  it('web_page keeps the main content only and takes the page title as name', async () => {
    pages['/article'] = `<html><head><title>Shipping guide</title></head><body>
      <nav>Home | Products | Cart</nav><div id="cookie-banner">We use cookies to improve your experience.</div>
      <article><h1>Shipping guide</h1><p>Orders leave our warehouse within two business days.</p><p>International delivery takes about a week.</p></article>
      <footer>Copyright Example Corp</footer></body></html>`;
    const res = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: privateStore, type: 'web_page', config: { source_url: `${siteUrl}/article` } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ type: 'web_page', status: 'unsynched', config: { source_url: `${siteUrl}/article` } });
    const done = await settled(res.body.id);
    expect(done).toMatchObject({ status: 'synched', name: 'Shipping guide' });
    const texts = (await chunkTexts(res.body.id)).join(' ');
    expect(texts).toContain('two business days');
    expect(texts).not.toMatch(/cookies|Copyright|Cart/);
  });

  it('web_site from a sitemap index makes child pages, capped by the page limit; a re-sync drops vanished pages', async () => {
    const urls = Array.from({ length: 30 }, (_, i) => `${siteUrl}/p${i}`);
    urls.forEach((u, i) => (pages[`/p${i}`] = `<html><head><title>Page ${i}</title></head><body><article><p>This is page number ${i} of the documentation site, about topic ${i}.</p></article></body></html>`));
    const urlset = (list: string[]) => `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${list.map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;
    pages['/sitemap-a.xml'] = urlset(urls.slice(0, 15));
    pages['/sitemap-b.xml'] = urlset(urls.slice(15));
    pages['/sitemap.xml'] = `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${siteUrl}/sitemap-a.xml</loc></sitemap><sitemap><loc>${siteUrl}/sitemap-b.xml</loc></sitemap></sitemapindex>`;

    const res = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: privateStore, type: 'web_site', name: 'Docs', config: { sitemap: `${siteUrl}/sitemap.xml` } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await settled(res.body.id)).status).toBe('synched');
    const children = () => sql('select id, status, config from datasources where group_id = ? order by created_at', [res.body.id]);
    expect(await children()).toHaveLength(25); // the default page cap
    await waitFor(async () => (await children()).every((c) => c.status === "synched"), 60_000, 'all pages synched');

    pages['/sitemap.xml'] = urlset(urls.slice(0, 3));
    const resync = await gql(app.url, `mutation($id: ID!) { resyncDatasource(id: $id) { status } }`, { id: res.body.id }, { token: org.apiKey });
    expect(resync.data.resyncDatasource.status).toBe('pending');
    await waitFor(async () => (await children()).length === 3, 30_000, 'vanished pages removed');
  }, 120_000);

  it("a web_site crawl leaves out the pages robots.txt forbids; a web_page asked for by its URL is read anyway", async () => {
    const page = (title: string) => `<html><head><title>${title}</title></head><body><article><p>${title}: a page of the site with enough words to index.</p></article></body></html>`;
    pages['/robots.txt'] = 'User-agent: *\nDisallow: /members\n';
    pages['/open'] = page('Open page');
    pages['/members'] = page('Members page');
    pages['/robots-sitemap.xml'] = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${siteUrl}/open</loc></url><url><loc>${siteUrl}/members</loc></url></urlset>`;
    try {
      const crawl = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: privateStore, type: 'web_site', config: { sitemap: `${siteUrl}/robots-sitemap.xml` } } });
      expect((await settled(crawl.body.id)).status).toBe('synched');
      const children = await sql('select config from datasources where group_id = ?', [crawl.body.id]);
      expect(children.map((c: any) => c.config.source_url)).toEqual([`${siteUrl}/open`]);

      const single = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: privateStore, type: 'web_page', config: { source_url: `${siteUrl}/members` } } });
      expect(await settled(single.body.id)).toMatchObject({ status: 'synched', name: 'Members page' });
    } finally {
      delete pages['/robots.txt'];
    }
  });

  it('refuses web inputs that are not URLs', async () => {
    const bad = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: privateStore, type: 'web_page', config: { source_url: 'file:///etc/passwd' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('config.source_url');
    const none = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: privateStore, type: 'web_site', config: {} } });
    expect(none.status).toBe(400);
    const kind = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: privateStore, type: 'video', config: {} } });
    expect(kind.status).toBe(400);
  });
});

describe('GraphQL: listing, deleting, and the status subscription', () => {
  it('datasourceStatusChanged pushes running then synched over graphql-sse', async () => {
    const client = createClient({ url: `${app.url}/graphql/stream`, headers: { authorization: `Bearer ${org.apiKey}` } });
    const events: { id: string; status: string }[] = [];
    let target: string | null = null;
    const sub = client.iterate({ query: `subscription($d: ID!) { datasourceStatusChanged(datastoreId: $d) { id status } }`, variables: { d: privateStore } });
    const reading = (async () => {
      for await (const event of sub) {
        const change = (event.data as any).datasourceStatusChanged;
        events.push(change);
        if (change.id === target && change.status === 'synched') break;
      }
    })();
    const create = async (name: string) =>
      (await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: privateStore, type: 'text', name, text: 'Subscriptions push every change.' } })).body.id as string;
    // Until an event arrives we cannot know the subscription listens: warm it up with a first document.
    const warmUp = await create('Warm-up');
    await waitFor(async () => events.some((e) => e.id === warmUp), 20_000, 'the subscription to deliver');
    target = await create('Live');
    await Promise.race([reading, new Promise((_, rej) => setTimeout(() => rej(new Error(`events so far: ${JSON.stringify(events)}`)), 20_000))]);
    client.dispose();
    const statuses = events.filter((e) => e.id === target).map((e) => e.status);
    expect(statuses).toEqual(['unsynched', 'running', 'synched']);
  });

  it('another organization cannot subscribe to, list or delete our datasources', async () => {
    const list = await gql(app.url, `query($d: ID!) { datasources(datastoreId: $d) { nodes { id } } }`, { d: privateStore }, { token: other.apiKey });
    expect(list.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const mine = await gql(app.url, `query($d: ID!) { datasources(datastoreId: $d, status: synched, first: 50) { nodes { id status } pageInfo { hasNextPage } } }`, { d: privateStore }, { token: org.apiKey });
    expect(mine.data.datasources.nodes.length).toBeGreaterThan(0);
    const target = mine.data.datasources.nodes[0].id;
    const del = await gql(app.url, `mutation($id: ID!) { deleteDatasource(id: $id) { id } }`, { id: target }, { token: other.apiKey });
    expect(del.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const ok = await gql(app.url, `mutation($id: ID!) { deleteDatasource(id: $id) { id } }`, { id: target }, { token: org.apiKey });
    expect(ok.data.deleteDatasource.id).toBe(target);
    expect(await sql('select count(*)::int as n from chunks where datasource_id = ?', [target])).toEqual([{ n: 0 }]);
  });

  it('deleting a datastore removes its datasources, chunks and files', async () => {
    const ds = await createDatastore(org.apiKey, 'private');
    const up = await upload(ds, { name: 'gone.txt', type: 'text/plain', data: 'This file will be deleted with its datastore.' });
    await settled(up.body.id);
    const [{ storage_key: key }] = await sql('select storage_key from datasources where id = ?', [up.body.id]);
    expect(await app.services.storage.stat(key)).not.toBeNull();
    const del = await gql(app.url, `mutation($id: ID!) { deleteDatastore(id: $id) { id } }`, { id: ds }, { token: org.apiKey });
    expect(del.data.deleteDatastore.id).toBe(ds);
    expect(await app.services.storage.stat(key)).toBeNull();
    expect(await sql('select count(*)::int as n from chunks where datastore_id = ?', [ds])).toEqual([{ n: 0 }]);
    expect(await sql('select count(*)::int as n from datasources where datastore_id = ?', [ds])).toEqual([{ n: 0 }]);
  });
});
