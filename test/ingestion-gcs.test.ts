/**
 * The service on Google Cloud Storage: the real @google-cloud/storage client against a small
 * local server speaking the GCS JSON API and checking v4 signatures (test/support/gcs-server.ts),
 * credentials found the standard way (GOOGLE_APPLICATION_CREDENTIALS).
 * generate-link -> PUT with only Content-Type -> process -> synched; direct uploads land in the
 * bucket; deleting a datasource removes its object.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { startGcsTestServer, type GcsTestServer } from './support/gcs-server.ts';
import { chunks, createDatastore, settled, sql, upload } from './support/ingest.ts';
import { MIME, makeDocx, makePdf } from './support/samples.ts';

const UPLOAD_MAX_BYTES = 64 * 1024;

let gcs: GcsTestServer;
let keyDir: string;
let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let store: string;
const savedCredentials = process.env.GOOGLE_APPLICATION_CREDENTIALS;

beforeAll(async () => {
  gcs = await startGcsTestServer();
  keyDir = mkdtempSync(path.join(tmpdir(), 'gcs-key-'));
  const keyFile = path.join(keyDir, 'service-account.json');
  writeFileSync(
    keyFile,
    JSON.stringify({
      type: 'service_account',
      project_id: 'fake-project',
      private_key_id: 'test-key',
      private_key: gcs.credentials.private_key,
      client_email: gcs.credentials.client_email,
      client_id: '1',
      token_uri: `${gcs.url}/token`,
    }),
    { mode: 0o600 },
  );
  process.env.GOOGLE_APPLICATION_CREDENTIALS = keyFile;
  app = await startTestApp({
    GCS_BUCKET: gcs.bucket,
    GCS_API_ENDPOINT: gcs.url,
    GCS_PROJECT_ID: 'fake-project',
    UPLOAD_MAX_BYTES: String(UPLOAD_MAX_BYTES),
  });
  org = await newOrganization(app.url, 'Cloud');
  store = await createDatastore(app, org.apiKey);
});

afterAll(async () => {
  await app?.close();
  await gcs?.close();
  if (savedCredentials === undefined) delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
  else process.env.GOOGLE_APPLICATION_CREDENTIALS = savedCredentials;
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
});

const storageKey = async (id: string) => (await sql(app, 'select storage_key from datasources where id = ?', [id]))[0]?.storage_key as string;

async function generateLink(type: string, fileName?: string) {
  const res = await call('POST', `${app.api}/external/datastores/file-upload/generate-link/${store}`, { token: org.apiKey, body: { type, fileName } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; link: string };
}

const processUpload = (id: string) => call('POST', `${app.api}/external/datastores/file-upload/process/${store}`, { token: org.apiKey, body: { id } });

describe('upload link on GCS (endpoints 1 and 2)', () => {
  it('generate-link -> PUT to the v4 signed URL with only Content-Type -> process -> synched', async () => {
    expect(app.config.storage.kind).toBe('gcs');
    const link = await generateLink(MIME.pdf, 'guide.pdf');
    // A client knows {id, link} and nothing else.
    expect(Object.keys(link).sort()).toEqual(['id', 'link']);
    const url = new URL(link.link);
    expect(url.origin).toBe(gcs.url);
    expect(url.searchParams.get('X-Goog-Algorithm')).toBe('GOOG4-RSA-SHA256');
    expect(url.searchParams.get('X-Goog-Expires')).toBe('900'); // 15 minutes

    expect((await processUpload(link.id)).status).toBe(400); // nothing uploaded yet

    const pdf = makePdf([['Cloud storage guide', 'Buckets hold objects.'], ['Second page about signed URLs']]);
    // The signature covers the declared type: another type is refused.
    expect((await fetch(link.link, { method: 'PUT', body: pdf, headers: { 'content-type': 'text/plain' } })).status).toBe(403);
    const put = await fetch(link.link, { method: 'PUT', body: pdf, headers: { 'content-type': MIME.pdf } });
    expect(put.status, await put.text()).toBe(200);
    const key = await storageKey(link.id);
    expect(key).toBe(`datastores/${store}/${link.id}/guide.pdf`);
    expect(gcs.objects.get(key)).toEqual({ data: pdf, contentType: MIME.pdf });

    const processed = await processUpload(link.id);
    expect(processed.status, JSON.stringify(processed.body)).toBe(200);
    expect(processed.body).toMatchObject({ id: link.id, type: 'file', status: 'unsynched', size: pdf.length });
    const done = await settled(app, org.apiKey, link.id);
    expect(done, done.errorMessage ?? '').toMatchObject({ status: 'synched' });
    const rows = await chunks(app, link.id);
    expect(rows.map((r) => r.page)).toEqual([1, 2]);
    expect(rows[0]!.text).toContain('Buckets hold objects.');
  });

  it('a PUT above the size cap is refused when processed (413) and the object is removed', async () => {
    const link = await generateLink(MIME.txt, 'big.txt');
    const put = await fetch(link.link, { method: 'PUT', body: Buffer.alloc(UPLOAD_MAX_BYTES + 1, 0x61), headers: { 'content-type': MIME.txt } });
    expect(put.status).toBe(200);
    const key = await storageKey(link.id);
    expect(gcs.objects.has(key)).toBe(true);
    const processed = await processUpload(link.id);
    expect(processed.status).toBe(413);
    expect(processed.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(gcs.objects.has(key)).toBe(false);
    expect(await chunks(app, link.id)).toEqual([]);
  });
});

describe('direct upload and delete on GCS', () => {
  it('a direct upload lands in the bucket and is processed from it; deleteDatasource removes the object', async () => {
    const docx = await makeDocx(['Stored in the bucket', 'Processed from the bucket']);
    const res = await upload(app, org.apiKey, store, { name: 'letter.docx', type: MIME.docx, data: docx });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const key = await storageKey(res.body.id);
    expect(key).toBe(`datastores/${store}/${res.body.id}/letter.docx`);
    expect(gcs.objects.get(key)).toEqual({ data: docx, contentType: MIME.docx });
    expect((await settled(app, org.apiKey, res.body.id)).status).toBe('synched');
    expect((await chunks(app, res.body.id)).map((r) => r.text).join('\n')).toContain('Processed from the bucket');

    const del = await gql(app.url, `mutation($id: ID!) { deleteDatasource(id: $id) { id } }`, { id: res.body.id }, { token: org.apiKey });
    expect(del.data?.deleteDatasource.id, JSON.stringify(del.errors)).toBe(res.body.id);
    expect(gcs.objects.has(key)).toBe(false);
    expect(await chunks(app, res.body.id)).toEqual([]);
    expect(await sql(app, 'select id from datasources where id = ?', [res.body.id])).toEqual([]);
  });

  it('deleting a link datasource whose file was uploaded removes that object too', async () => {
    const link = await generateLink(MIME.csv, 'prices.csv');
    expect((await fetch(link.link, { method: 'PUT', body: 'a,b\n1,2\n', headers: { 'content-type': MIME.csv } })).status).toBe(200);
    const key = await storageKey(link.id);
    expect(gcs.objects.has(key)).toBe(true);
    const del = await gql(app.url, `mutation($id: ID!) { deleteDatasource(id: $id) { id } }`, { id: link.id }, { token: org.apiKey });
    expect(del.data?.deleteDatasource.id).toBe(link.id);
    expect(gcs.objects.has(key)).toBe(false);
  });
});
