/**
 * HTTP has one home: credentials are checked from the headers before a body is read, the
 * upload link is a REST row like the others, and REST and /graphql read JSON bodies the same way.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http as call, newOrganization } from './support/client.ts';

let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let privateStore: string;
let publicStore: string;

beforeAll(async () => {
  app = await startTestApp();
  org = await newOrganization(app.url, 'Http');
  const create = async (visibility: string) =>
    (await gql(app.url, `mutation($i: CreateDatastoreInput!) { createDatastore(input: $i) { id } }`, { i: { name: `S ${visibility}`, visibility } }, { token: org.apiKey })).data.createDatastore.id as string;
  privateStore = await create('private');
  publicStore = await create('public');
}, 60_000);
afterAll(() => app?.close());

/**
 * Sends the headers and the first part of a multipart body, then waits without finishing it.
 * Resolves with the status if the server answers while the body is still arriving.
 */
function answerBeforeBodyEnds(url: string, headers: Record<string, string>, method = 'POST'): Promise<{ status: number; body: any; bodyEnded: boolean }> {
  const boundary = 'xBoundary1234';
  const first = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="custom_id"\r\n\r\nc1\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n` +
      'a'.repeat(64 * 1024),
  );
  return new Promise((resolve, reject) => {
    let bodyEnded = false;
    const req = http.request(url, {
      method,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(50 * 1024 * 1024), ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        const result = { status: res.statusCode!, body: JSON.parse(text), bodyEnded };
        req.destroy();
        resolve(result);
      });
    });
    req.on('error', (err) => (bodyEnded ? undefined : reject(err)));
    req.write(first);
    // 50 MB were announced and 64 KB sent: the rest would only come after the answer.
    setTimeout(() => {
      bodyEnded = true;
      req.destroy();
      reject(new Error('no answer while the body was still arriving'));
    }, 5000).unref();
  });
}

describe('credentials before the body', () => {
  it('answers an anonymous multipart upload to a private datastore with 401 while its body is still arriving', async () => {
    const res = await answerBeforeBodyEnds(`${app.api}/external/datastores/file-upload/${privateStore}`, {});
    expect(res.status).toBe(401);
    expect(res.bodyEnded).toBe(false);
    expect(res.body.error.code).toBe('UNAUTHENTICATED');
  });

  it('does the same for the datasources endpoint, an invalid key, and a public datastore (uploads need a member)', async () => {
    for (const [url, headers] of [
      [`${app.api}/datasources`, {}],
      [`${app.api}/external/datastores/file-upload/${privateStore}`, { authorization: 'Bearer ak_not-a-key' }],
      [`${app.api}/external/datastores/file-upload/${publicStore}`, {}],
    ] as const) {
      const res = await answerBeforeBodyEnds(url, headers);
      expect(res.status, url).toBe(401);
      expect(res.bodyEnded).toBe(false);
    }
    // Nothing was created.
    const list = await gql(app.url, `query($id: ID!) { datasources(datastoreId: $id) { nodes { id } } }`, { id: publicStore }, { token: org.apiKey });
    expect(list.data?.datasources.nodes ?? list.errors).toEqual([]);
  });

  it('lets a member upload through the same row', async () => {
    const form = new FormData();
    form.append('file', new Blob(['hello from a member'], { type: 'text/plain' }), 'hello.txt');
    const res = await fetch(`${app.api}/external/datastores/file-upload/${privateStore}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${org.apiKey}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).fileName).toBe('hello.txt');
  });
});

describe('the upload link is a REST row', () => {
  it('takes one PUT, answers from the error table, reads no credentials, and returns the request id', async () => {
    const link = await call('POST', `${app.api}/external/datastores/file-upload/generate-link/${privateStore}`, { token: org.apiKey, body: { type: 'text/plain', fileName: 'notes.txt' } });
    expect(link.status).toBe(200);
    const put = (body: string, headers: Record<string, string>) => fetch(link.body.link, { method: 'PUT', body, headers });

    const wrongType = await put('x', { 'content-type': 'application/pdf' });
    expect(wrongType.status).toBe(400);
    expect(((await wrongType.json()) as any).error.code).toBe('BAD_USER_INPUT');

    // The link is the credential: a stale Authorization header beside it changes nothing.
    const ok = await put('some notes', { 'content-type': 'text/plain', authorization: 'Bearer ak_stale', 'x-request-id': 'put-1' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toBe('put-1');
    expect(await ok.json()).toEqual({ ok: true, size: 10 });

    const again = await put('other', { 'content-type': 'text/plain' });
    expect(again.status).toBe(403);
    expect(await again.json()).toEqual({ error: { code: 'FORBIDDEN', message: 'The upload link was already used.' } });

    const processed = await call('POST', `${app.api}/external/datastores/file-upload/process/${privateStore}`, { token: org.apiKey, body: { id: link.body.id } });
    expect(processed.status).toBe(200);
    expect(processed.body.size).toBe(10);
  });

  it('answers a PUT to another path under /uploads with the table', async () => {
    const res = await fetch(`${app.url}/uploads/not-a-token`, { method: 'PUT', body: 'x', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error).toEqual({ code: 'FORBIDDEN', message: 'The upload link is invalid.' });
  });
});

describe('one JSON body reader for REST and GraphQL', () => {
  const restCall = (rawBody: string, headers: Record<string, string> = {}) => call('POST', `${app.api}/datastores/${publicStore}/query`, { rawBody, headers });
  const graphqlCall = (rawBody: string, headers: Record<string, string> = {}) => call('POST', `${app.url}/graphql`, { rawBody, headers });

  it.each([
    ['malformed JSON', '{"query": ', {}, 400, 'BAD_USER_INPUT', 'The request body is not valid JSON.'],
    ['a type that is not JSON', '{"query": "x"}', { 'content-type': 'text/plain' }, 415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.'],
    ['a charset that is not UTF-8', '{"query": "x"}', { 'content-type': 'application/json; charset=latin1' }, 415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported; send UTF-8 JSON.'],
  ] as const)('%s: the same status, code and message on both', async (_name, body, headers, status, code, message) => {
    const rest = await restCall(body, headers);
    expect(rest.status).toBe(status);
    expect(rest.body.error).toEqual({ code, message });
    const graphql = await graphqlCall(body, headers);
    expect(graphql.status).toBe(status);
    expect(graphql.body.errors[0]).toEqual({ message, extensions: { code } });
  });

  it('a body over the JSON limit: 413 on REST before it is all read', async () => {
    const res = await call('POST', `${app.api}/datastores/${publicStore}/query`, { body: { query: 'x'.repeat(app.config.jsonBodyLimitBytes + 10) } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
