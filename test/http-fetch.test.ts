/**
 * The model clients' fetch over node:http (src/providers/http-fetch.ts), against a real local
 * HTTP server: what the openai SDK relies on from a fetch.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpFetch } from '../src/providers/http-fetch.ts';

let server: http.Server;
let base: string;
const closed: string[] = [];
const fetchHttp = createHttpFetch();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      if (req.url === '/echo') {
        res.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'r-1' });
        res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null, length: req.headers['content-length'] ?? null }));
      } else if (req.url === '/gzip') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(zlib.gzipSync(JSON.stringify({ compressed: true })));
      } else if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: one\n\n');
        const timer = setInterval(() => res.write('data: more\n\n'), 20);
        res.on('close', () => {
          clearInterval(timer);
          closed.push('stream');
        });
      } else if (req.url === '/slow') {
        const timer = setTimeout(() => res.end('late'), 5_000);
        res.on('close', () => {
          clearTimeout(timer);
          closed.push('slow');
        });
      } else if (req.url === '/empty') {
        res.writeHead(204).end();
      } else {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'boom' } }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

const waitFor = async (what: string) => {
  for (let i = 0; i < 100 && !closed.includes(what); i++) await new Promise((r) => setTimeout(r, 20));
  return closed.includes(what);
};

describe('createHttpFetch', () => {
  it('sends method, headers and body; gives status, headers and body back', async () => {
    const res = await fetchHttp(`${base}/echo`, { method: 'POST', headers: new Headers({ Authorization: 'Bearer k', 'content-type': 'application/json' }), body: '{"a":"é"}' });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('x-request-id')).toBe('r-1');
    expect(await res.json()).toEqual({ method: 'POST', body: '{"a":"é"}', auth: 'Bearer k', length: String(Buffer.byteLength('{"a":"é"}')) });
  });

  it('decodes a gzip body as fetch does', async () => {
    const res = await fetchHttp(`${base}/gzip`);
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(await res.json()).toEqual({ compressed: true });
  });

  it('answers errors and empty responses as they are', async () => {
    const failed = await fetchHttp(`${base}/nope`, { method: 'GET' });
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: { message: 'boom' } });
    const empty = await fetchHttp(`${base}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it('streams the body as it arrives, and an abort closes the request', async () => {
    const controller = new AbortController();
    const res = await fetchHttp(`${base}/stream`, { signal: controller.signal });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: one\n\n');
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    expect(await waitFor('stream')).toBe(true);
  });

  it('an abort before the response rejects with the abort reason and closes the request', async () => {
    const controller = new AbortController();
    const pending = fetchHttp(`${base}/slow`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(await waitFor('slow')).toBe(true);
    const already = new AbortController();
    already.abort();
    await expect(fetchHttp(`${base}/echo`, { signal: already.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('hands what it cannot carry (a FormData body) to the built-in fetch', async () => {
    const form = new FormData();
    form.set('field', 'value');
    const res = await fetchHttp(`${base}/echo`, { method: 'POST', body: form });
    const echoed = (await res.json()) as { body: string };
    expect(echoed.body).toContain('name="field"');
    expect(echoed.body).toContain('value');
  });
});
