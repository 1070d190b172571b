import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLSchema } from 'graphql';
import { createRestHandler } from '../rest/handler.ts';
import { routes } from '../rest/routes.ts';
import { loadConfig } from '../src/config.ts';
import type { Context } from '../src/graphql/context.ts';
import { LocalStorage, SIGNING_KEY_FILE } from '../src/providers/local-storage.ts';
import { createStorage } from '../src/providers/create-storage.ts';
import { InvalidStorageKeyError, StorageNotFoundError, type ObjectStorage } from '../src/providers/storage.ts';
import { crc32c, startGcsTestServer, type GcsTestServer } from './support/gcs-server.ts';

const KEY = 'datastores/ds_1/src_1/report.txt';

function streamOf(chunks: Buffer[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function putTo(url: string, body: Buffer | ReadableStream<Uint8Array>, headers: Record<string, string>) {
  const res = await fetch(url, { method: 'PUT', body, headers, duplex: 'half' } as RequestInit);
  const text = await res.text();
  return { status: res.status, text, json: text.startsWith('{') ? (JSON.parse(text) as Record<string, any>) : null };
}

describe('local storage', () => {
  let dataDir: string;
  let storage: LocalStorage;
  let server: http.Server;
  let publicUrl: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'storage-test-'));
    // The REST handler with only the upload link's row: the same machinery as the service, no database.
    const upload = routes.filter((r) => r.root);
    const rest = createRestHandler({
      schema: new GraphQLSchema({}),
      routes: upload,
      basePath: '/api',
      bodyLimitBytes: 1024,
      uploadLimitBytes: 1024,
      context: async () => ({ services: { storage } }) as unknown as Context,
      onInternalError: (err) => console.error(err),
    });
    server = http.createServer((req, res) => {
      if (!rest(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = loadConfig({ DATA_DIR: dataDir, PUBLIC_URL: publicUrl });
    const created = createStorage(config);
    expect(created.kind).toBe('local');
    storage = created as LocalStorage;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('puts, gets, stats, overwrites and deletes objects', async () => {
    const key = 'datastores/ds_1/src_crud/notes.md';
    expect(await storage.stat(key)).toBeNull();
    await expect(storage.get(key)).rejects.toBeInstanceOf(StorageNotFoundError);

    await storage.put(key, Buffer.from('# hello'), 'text/markdown');
    expect(await storage.stat(key)).toEqual({ size: 7, contentType: 'text/markdown' });
    expect((await storage.get(key)).toString()).toBe('# hello');

    await storage.put(key, Buffer.from('replaced'), 'text/plain');
    expect(await storage.stat(key)).toEqual({ size: 8, contentType: 'text/plain' });
    expect((await storage.get(key)).toString()).toBe('replaced');

    await storage.delete(key);
    await storage.delete(key);
    expect(await storage.stat(key)).toBeNull();
    await expect(storage.get(key)).rejects.toBeInstanceOf(StorageNotFoundError);
    // The datasource folder went with its last file.
    expect(existsSync(path.join(storage.root, 'objects', 'datastores', 'ds_1', 'src_crud'))).toBe(false);
    expect(existsSync(path.join(storage.root, 'meta', 'datastores', 'ds_1', 'src_crud'))).toBe(false);
    expect(readdirSync(path.join(storage.root, 'tmp'))).toEqual([]);
  });

  it('refuses keys that could escape the storage folder', async () => {
    const bad = ['', '/etc/passwd', 'datastores/../../etc', 'a/\0b', 'a//b', 'a/./b', 'a/', 'x'.repeat(1025), 'a/\nb'];
    for (const key of bad) {
      await expect(storage.put(key, Buffer.from('x'), 'text/plain'), JSON.stringify(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
      await expect(storage.stat(key)).rejects.toBeInstanceOf(InvalidStorageKeyError);
      await expect(storage.createUploadLink(key, { contentType: 'text/plain', maxBytes: 10 })).rejects.toBeInstanceOf(
        InvalidStorageKeyError,
      );
    }
    await storage.put(`datastores/ds_1/src_ok/${'é'.repeat(100)}.txt`, Buffer.from('ok'), 'text/plain');
  });

  it('keeps the generated signing key in DATA_DIR, owner-only, shared by every instance', async () => {
    const link = await storage.createUploadLink('datastores/ds_1/src_key/a.txt', { contentType: 'text/plain', maxBytes: 100 });
    const keyFile = path.join(dataDir, SIGNING_KEY_FILE);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    // A second process (or a restart) on the same DATA_DIR accepts links minted by the first.
    const other = new LocalStorage({ dir: path.join(dataDir, 'files'), publicUrl, dataDir });
    expect(other.verifyUploadToken(link.url.split('/uploads/')[1]!).ok).toBe(true);
    // A different secret does not.
    const foreign = new LocalStorage({ dir: path.join(dataDir, 'files'), publicUrl, dataDir, signingSecret: 'another-secret-of-some-length' });
    expect(foreign.verifyUploadToken(link.url.split('/uploads/')[1]!)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('accepts one PUT on an upload link, then refuses the link', async () => {
    const key = 'datastores/ds_1/src_link/data.csv';
    const before = Date.now();
    const link = await storage.createUploadLink(key, { contentType: 'text/csv', maxBytes: 1024 });
    expect(link.method).toBe('PUT');
    expect(link.url.startsWith(`${publicUrl}/uploads/`)).toBe(true);
    expect(link.headers).toEqual({ 'content-type': 'text/csv' });
    const ttl = link.expiresAt.getTime() - before;
    expect(ttl).toBeGreaterThanOrEqual(15 * 60 * 1000 - 1000);
    expect(ttl).toBeLessThanOrEqual(15 * 60 * 1000 + 1000);

    const body = Buffer.from('a,b\n1,2\n');
    const first = await putTo(link.url, body, link.headers);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ ok: true, size: body.length });
    expect(await storage.get(key)).toEqual(body);
    expect(await storage.stat(key)).toEqual({ size: body.length, contentType: 'text/csv' });

    const again = await putTo(link.url, Buffer.from('other'), link.headers);
    expect(again.status).toBe(403);
    expect(again.json).toEqual({ error: { code: 'FORBIDDEN', message: 'The upload link was already used.' } });
    expect(await storage.get(key)).toEqual(body);
  });

  it('refuses tampered, malformed and expired links', async () => {
    const key = 'datastores/ds_1/src_bad/data.txt';
    const link = await storage.createUploadLink(key, { contentType: 'text/plain', maxBytes: 1024 });
    const token = link.url.split('/uploads/')[1]!;
    const [payload, signature] = token.split('.') as [string, string];

    // The payload rewritten to another key, signature kept.
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), key: 'datastores/x/y/z' }));
    for (const bad of [
      `${forged.toString('base64url')}.${signature}`,
      `${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`,
      `${payload}`,
      'not-a-token',
      `${payload}.${signature}.extra`,
    ]) {
      const res = await putTo(`${publicUrl}/uploads/${bad}`, Buffer.from('x'), link.headers);
      expect(res.status, bad).toBe(403);
      expect(res.json).toEqual({ error: { code: 'FORBIDDEN', message: 'The upload link is invalid.' } });
    }

    const short = await storage.createUploadLink(key, { contentType: 'text/plain', maxBytes: 1024, ttlMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const expired = await putTo(short.url, Buffer.from('x'), short.headers);
    expect(expired.status).toBe(403);
    expect(expired.json).toEqual({ error: { code: 'FORBIDDEN', message: 'The upload link has expired.' } });

    const minted = storage.signUploadToken({ key, contentType: 'text/plain', maxBytes: 1024, exp: Date.now() - 60_000 });
    expect((await putTo(`${publicUrl}/uploads/${minted}`, Buffer.from('x'), link.headers)).json?.error.message).toBe(
      'The upload link has expired.',
    );
    expect(await storage.stat(key)).toBeNull();
  });

  it('checks the content type by its MIME essence', async () => {
    const key = 'datastores/ds_1/src_type/page.txt';
    const link = await storage.createUploadLink(key, { contentType: 'text/plain', maxBytes: 1024 });
    const wrong = await putTo(link.url, Buffer.from('x'), { 'content-type': 'application/pdf' });
    expect(wrong.status).toBe(400);
    expect(wrong.json?.error.code).toBe('BAD_USER_INPUT');
    expect(await storage.stat(key)).toBeNull();

    // A refused attempt does not use up the link; parameters and case do not matter.
    const ok = await putTo(link.url, Buffer.from('hi'), { 'content-type': 'Text/Plain; charset=utf-8' });
    expect(ok.status).toBe(200);
  });

  it('refuses bodies over maxBytes, declared or streamed, and keeps nothing', async () => {
    const key = 'datastores/ds_1/src_big/big.bin';
    const link = await storage.createUploadLink(key, { contentType: 'application/octet-stream', maxBytes: 1000 });

    const declared = await putTo(link.url, Buffer.alloc(1001), link.headers);
    expect(declared.status).toBe(413);
    expect(declared.json?.error.code).toBe('PAYLOAD_TOO_LARGE');

    // Chunked: no Content-Length, so only counting while streaming catches it.
    const chunks = Array.from({ length: 200 }, () => Buffer.alloc(64 * 1024, 1));
    const streamed = await putTo(link.url, streamOf(chunks), link.headers);
    expect(streamed.status).toBe(413);
    expect(streamed.json?.error.code).toBe('PAYLOAD_TOO_LARGE');

    expect(await storage.stat(key)).toBeNull();
    expect(readdirSync(path.join(storage.root, 'tmp'))).toEqual([]);

    // Exactly maxBytes, streamed, is fine, and the link was not used up by the refusals.
    const fits = await putTo(link.url, streamOf([Buffer.alloc(600, 2), Buffer.alloc(400, 3)]), link.headers);
    expect(fits.status).toBe(200);
    expect(fits.json).toEqual({ ok: true, size: 1000 });
    expect((await storage.get(key)).length).toBe(1000);
  });

  it('lets exactly one of several concurrent PUTs on one link win', async () => {
    const key = 'datastores/ds_1/src_race/race.txt';
    const link = await storage.createUploadLink(key, { contentType: 'text/plain', maxBytes: 10 * 1024 * 1024 });
    const bodies = Array.from({ length: 6 }, (_, i) => Buffer.alloc(256 * 1024, 65 + i));
    const results = await Promise.all(bodies.map((body) => putTo(link.url, streamOf([body.subarray(0, 1000), body.subarray(1000)]), link.headers)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 403, 403, 403, 403, 403]);
    const winner = bodies[results.findIndex((r) => r.status === 200)]!;
    expect((await storage.get(key)).equals(winner)).toBe(true);
  });

  it('never lets a second link overwrite an object another link stored', async () => {
    const key = 'datastores/ds_1/src_two/two.txt';
    const a = await storage.createUploadLink(key, { contentType: 'text/plain', maxBytes: 1024 });
    const b = await storage.createUploadLink(key, { contentType: 'text/plain', maxBytes: 1024 });
    const results = await Promise.all([putTo(a.url, Buffer.from('from a'), a.headers), putTo(b.url, Buffer.from('from b'), b.headers)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
  });
});

describe('gcs storage (through @google-cloud/storage against the fake GCS server)', () => {
  let gcs: GcsTestServer;
  let storage: ObjectStorage;
  let keyDir: string;
  const savedCredentialsEnv = process.env.GOOGLE_APPLICATION_CREDENTIALS;

  beforeAll(async () => {
    gcs = await startGcsTestServer();
    // Production reads credentials the standard way; so does this test: a key file named by
    // GOOGLE_APPLICATION_CREDENTIALS, shaped like the JSON key Google hands out.
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
    const config = loadConfig({ GCS_BUCKET: gcs.bucket, GCS_API_ENDPOINT: gcs.url, GCS_PROJECT_ID: 'fake-project' });
    storage = createStorage(config);
  });

  afterAll(async () => {
    if (savedCredentialsEnv === undefined) delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
    else process.env.GOOGLE_APPLICATION_CREDENTIALS = savedCredentialsEnv;
    await gcs?.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('computes CRC32C like GCS does', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(0))).toBe(0);
  });

  it('round-trips put, stat, get and delete', async () => {
    expect(storage.kind).toBe('gcs');
    const data = Buffer.from('%PDF-1.4 fake bytes \u00e9\u00e8', 'utf8');
    await storage.put(KEY, data, 'application/pdf');
    expect(gcs.objects.get(KEY)).toEqual({ data, contentType: 'application/pdf' });
    expect(await storage.stat(KEY)).toEqual({ size: data.length, contentType: 'application/pdf' });
    expect((await storage.get(KEY)).equals(data)).toBe(true);

    await storage.delete(KEY);
    await storage.delete(KEY);
    expect(gcs.objects.has(KEY)).toBe(false);
    expect(await storage.stat(KEY)).toBeNull();
    await expect(storage.get(KEY)).rejects.toBeInstanceOf(StorageNotFoundError);
    await expect(storage.put('../x', data, 'text/plain')).rejects.toBeInstanceOf(InvalidStorageKeyError);
  });

  it('hands out a v4 signed URL that a client knowing only the link and the type can PUT to', async () => {
    const key = 'datastores/ds_2/src_9/My Report (final).docx';
    const contentType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    const link = await storage.createUploadLink(key, { contentType, maxBytes: 2048 });
    const url = new URL(link.url);
    expect(url.origin).toBe(gcs.url);
    expect(url.searchParams.get('X-Goog-Algorithm')).toBe('GOOG4-RSA-SHA256');
    expect(url.searchParams.get('X-Goog-Expires')).toBe('900');
    expect(url.searchParams.get('X-Goog-SignedHeaders')).toBe('content-type;host');
    // The REST answer is {id, link}: nothing but Content-Type may be required.
    expect(link.headers).toEqual({ 'content-type': contentType });

    const body = Buffer.from('PK\u0003\u0004 pretend docx');
    const res = await putTo(link.url, body, { 'content-type': contentType });
    expect(res.status, res.text).toBe(200);
    expect(gcs.objects.get(key)).toEqual({ data: body, contentType });
    expect(await storage.stat(key)).toEqual({ size: body.length, contentType });
  });

  it('has the fake refuse tampered, incomplete and expired signed requests', async () => {
    const key = 'datastores/ds_2/src_10/a.txt';
    const link = await storage.createUploadLink(key, { contentType: 'text/plain', maxBytes: 16 });
    const body = Buffer.from('small');

    const tampered = new URL(link.url);
    const sig = tampered.searchParams.get('X-Goog-Signature')!;
    tampered.searchParams.set('X-Goog-Signature', `${sig.slice(0, -4)}${sig.endsWith('0000') ? '1111' : '0000'}`);
    expect((await putTo(tampered.href, body, link.headers)).status).toBe(403);

    const otherObject = new URL(link.url);
    otherObject.pathname = `/${gcs.bucket}/datastores/ds_2/src_10/b.txt`;
    expect((await putTo(otherObject.href, body, link.headers)).status).toBe(403);

    for (const param of ['X-Goog-Signature', 'X-Goog-Date', 'X-Goog-Credential']) {
      const stripped = new URL(link.url);
      stripped.searchParams.delete(param);
      expect((await putTo(stripped.href, body, link.headers)).status, param).toBeGreaterThanOrEqual(400);
    }
    expect((await putTo(link.url.split('?')[0]!, body, link.headers)).status).toBe(403);

    // The signed Content-Type must be sent as signed.
    expect((await putTo(link.url, body, { 'content-type': 'text/html' })).status).toBe(403);
    expect((await putTo(link.url, body, {})).status).toBe(403);

    expect(gcs.objects.has(key)).toBe(false);

    gcs.advanceTime(15 * 60 * 1000 + 1000);
    try {
      const expired = await putTo(link.url, body, link.headers);
      expect(expired.status).toBe(400);
      expect(expired.text).toContain('ExpiredToken');
    } finally {
      gcs.advanceTime(-(15 * 60 * 1000 + 1000));
    }
    expect(gcs.objects.has(key)).toBe(false);
  });

  it('honours a custom link lifetime', async () => {
    const before = Date.now();
    const link = await storage.createUploadLink('datastores/ds_3/src_1/x.json', { contentType: 'application/json', maxBytes: 100, ttlMs: 60_000 });
    expect(new URL(link.url).searchParams.get('X-Goog-Expires')).toBe('60');
    expect(Math.abs(link.expiresAt.getTime() - (before + 60_000))).toBeLessThan(2000);
    expect((await putTo(link.url, Buffer.from('{}'), link.headers)).status).toBe(200);
    expect((await storage.get('datastores/ds_3/src_1/x.json')).toString()).toBe('{}');
  });
});
