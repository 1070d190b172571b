/**
 * The crawler's fetch must never reach the server's own network unless configured to, must
 * re-check every redirect hop, and must bound time and memory. A real local HTTP server
 * stands in for the sites; it counts requests so a refusal is proven to happen before any
 * connection.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync, brotliCompressSync, deflateSync, deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  FetchError,
  checkUrl,
  isPrivateAddress,
  safeFetch,
  safeFetchWithPolicy,
  type AddressPolicy,
  type FetchErrorCode,
} from '../src/providers/safe-fetch.ts';

let server: http.Server;
let port: number;
let base: string;
let requests: string[] = [];
const sockets = new Set<import('node:net').Socket>();

const BIG = Buffer.alloc(64 * 1024, 'a');

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    requests.push(path);
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<h1>home</h1>');
    } else if (path.startsWith('/chain/')) {
      // /chain/N redirects N times, relative Location, then answers.
      const n = Number(path.split('/')[2]);
      if (n > 0) {
        res.writeHead(302, { location: `../chain/${n - 1}` });
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('end of chain');
      }
    } else if (path === '/redirect-to') {
      res.writeHead(301, { location: url.searchParams.get('target')! });
      res.end();
    } else if (path === '/missing') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('nope');
    } else if (path === '/big-declared') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': BIG.length });
      res.end(BIG);
    } else if (path === '/big-chunked') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // Several writes without Content-Length: the cap must act on the stream.
      for (let i = 0; i < 8; i++) res.write(BIG.subarray(0, 8 * 1024));
      res.end();
    } else if (path === '/gzip-bomb') {
      // Small on the wire, large once decoded.
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(10 * 1024 * 1024)));
    } else if (path === '/slow-headers') {
      setTimeout(() => res.end('late'), 5_000).unref();
    } else if (path === '/slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part');
      setTimeout(() => res.end('rest'), 5_000).unref();
    } else if (path === '/gzip') {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(gzipSync('<p>compressed with gzip</p>'));
    } else if (path === '/br') {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'br' });
      res.end(brotliCompressSync('<p>compressed with brotli</p>'));
    } else if (path === '/deflate') {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'deflate' });
      res.end(deflateSync('<p>zlib deflate</p>'));
    } else if (path === '/deflate-raw') {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'deflate' });
      res.end(deflateRawSync('<p>raw deflate</p>'));
    } else if (path === '/zstd') {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'zstd' });
      res.end('whatever');
    } else if (path === '/echo-headers') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.headers));
    } else {
      res.writeHead(500);
      res.end();
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests = [];
});

async function fetchError(promise: Promise<unknown>): Promise<FetchError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(FetchError);
    return err as FetchError;
  }
  throw new Error('expected the fetch to fail');
}

async function expectCode(promise: Promise<unknown>, code: FetchErrorCode) {
  const err = await fetchError(promise);
  expect(err.code, err.message).toBe(code);
  return err;
}

describe('isPrivateAddress', () => {
  it.each([
    ['127.0.0.1'], ['127.255.255.254'], ['10.0.0.1'], ['172.16.0.1'], ['172.31.255.255'], ['192.168.1.1'],
    ['169.254.169.254'], ['169.254.0.1'], ['0.0.0.0'], ['0.1.2.3'], ['100.64.0.1'], ['100.127.255.255'],
    ['224.0.0.1'], ['239.255.255.250'], ['255.255.255.255'], ['240.0.0.1'], ['192.0.2.1'], ['198.18.0.1'],
    ['::1'], ['::'], ['fe80::1'], ['fe80::1%eth0'], ['fc00::1'], ['fd12:3456:789a::1'], ['ff02::1'],
    ['::ffff:127.0.0.1'], ['::ffff:7f00:1'], ['[::ffff:127.0.0.1]'], ['::ffff:10.0.0.1'], ['::ffff:a9fe:a9fe'],
    ['64:ff9b::7f00:1'], ['64:ff9b::a00:1'], ['2002:7f00:1::1'], ['2002:a00:1::'], ['2001:db8::1'],
    ['not an ip'], [''], ['256.1.1.1'],
  ])('%s is private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    ['8.8.8.8'], ['1.1.1.1'], ['93.184.216.34'], ['172.32.0.1'], ['172.15.255.255'], ['100.128.0.1'],
    ['192.169.0.1'], ['2606:4700::1111'], ['2001:4860:4860::8888'], ['::ffff:8.8.8.8'],
  ])('%s is public', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });
});

describe('checkUrl', () => {
  it.each([['ftp://example.com/'], ['file:///etc/passwd'], ['javascript:alert(1)'], ['not a url'], ['http://user:pw@example.com/'], ['http://user@example.com/']])(
    'refuses %s as BAD_URL',
    (url) => {
      expect(() => checkUrl(url, true)).toThrow(expect.objectContaining({ code: 'BAD_URL' }));
    },
  );

  it.each([['http://2130706433/'], ['http://0x7f.1/'], ['http://127.1/'], ['http://[::ffff:7f00:1]/'], ['http://[0:0:0:0:0:ffff:127.0.0.1]/']])(
    'sees through the IP spelling of %s',
    (url) => {
      expect(() => checkUrl(url, false)).toThrow(expect.objectContaining({ code: 'PRIVATE_ADDRESS' }));
    },
  );
});

describe('safeFetch with private addresses refused', () => {
  const refused = () => [
    `http://127.0.0.1:${port}/`,
    'http://10.0.0.1/',
    'http://169.254.169.254/latest/meta-data',
    `http://[::ffff:127.0.0.1]:${port}/`,
    `http://[::1]:${port}/`,
    `http://localhost:${port}/`,
    `http://0.0.0.0:${port}/`,
    `https://127.0.0.1:${port}/`,
  ];

  it('refuses every private target before sending anything', async () => {
    for (const url of refused()) {
      await expectCode(safeFetch(url, { allowPrivate: false, timeoutMs: 3_000 }), 'PRIVATE_ADDRESS');
    }
    expect(requests).toEqual([]);
  });

  it('refuses bad URLs', async () => {
    await expectCode(safeFetch('file:///etc/passwd', { allowPrivate: true }), 'BAD_URL');
    await expectCode(safeFetch(`http://u:p@127.0.0.1:${port}/`, { allowPrivate: true }), 'BAD_URL');
    expect(requests).toEqual([]);
  });
});

describe('safeFetch with private addresses allowed', () => {
  const opts = { allowPrivate: true, timeoutMs: 3_000 };

  it('fetches a page', async () => {
    const res = await safeFetch(`${base}/`, opts);
    expect(res).toMatchObject({ url: `${base}/`, status: 200, contentType: 'text/html; charset=utf-8' });
    expect(res.body.toString()).toBe('<h1>home</h1>');
  });

  it('fetches through a name that resolves to loopback', async () => {
    const res = await safeFetch(`http://localhost:${port}/`, opts);
    expect(res.body.toString()).toBe('<h1>home</h1>');
  });

  it('sends the crawler headers', async () => {
    const res = await safeFetch(`${base}/echo-headers`, { ...opts, accept: 'text/html' });
    const headers = JSON.parse(res.body.toString());
    expect(headers['user-agent']).toBe('agentbase-crawler/1.0 (+https://github.com/agentbase)');
    expect(headers.accept).toBe('text/html');
    expect(headers['accept-encoding']).toContain('gzip');
  });

  it('follows redirects, relative ones included, and reports the final URL', async () => {
    const res = await safeFetch(`${base}/chain/3`, opts);
    expect(res.url).toBe(`${base}/chain/0`);
    expect(res.body.toString()).toBe('end of chain');
    expect(requests).toEqual(['/chain/3', '/chain/2', '/chain/1', '/chain/0']);
  });

  it('allows exactly maxRedirects redirects and refuses one more', async () => {
    await expect(safeFetch(`${base}/chain/2`, { ...opts, maxRedirects: 2 })).resolves.toMatchObject({ status: 200 });
    await expectCode(safeFetch(`${base}/chain/3`, { ...opts, maxRedirects: 2 }), 'TOO_MANY_REDIRECTS');
    await expectCode(safeFetch(`${base}/chain/6`, opts), 'TOO_MANY_REDIRECTS');
  });

  it('refuses a redirect to a non-http scheme', async () => {
    await expectCode(safeFetch(`${base}/redirect-to?target=file:///etc/passwd`, opts), 'BAD_URL');
  });

  it('reports HTTP errors with their status', async () => {
    const err = await expectCode(safeFetch(`${base}/missing`, opts), 'HTTP_STATUS');
    expect(err.status).toBe(404);
  });

  it('caps the body with and without Content-Length, and after decompression', async () => {
    const small = { ...opts, maxBytes: 16 * 1024 };
    await expectCode(safeFetch(`${base}/big-declared`, small), 'TOO_LARGE');
    await expectCode(safeFetch(`${base}/big-chunked`, small), 'TOO_LARGE');
    await expectCode(safeFetch(`${base}/gzip-bomb`, { ...opts, maxBytes: 1024 * 1024 }), 'TOO_LARGE');
    // Just under the cap passes.
    const res = await safeFetch(`${base}/big-chunked`, { ...opts, maxBytes: 64 * 1024 });
    expect(res.body.length).toBe(64 * 1024);
  });

  it('times out on slow headers and on a slow body', async () => {
    const started = Date.now();
    await expectCode(safeFetch(`${base}/slow-headers`, { ...opts, timeoutMs: 300 }), 'TIMEOUT');
    await expectCode(safeFetch(`${base}/slow-body`, { ...opts, timeoutMs: 300 }), 'TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('hands back the caller’s abort reason', async () => {
    const controller = new AbortController();
    const pending = safeFetch(`${base}/slow-headers`, { ...opts, signal: controller.signal });
    const reason = new Error('stop');
    setTimeout(() => controller.abort(reason), 50);
    await expect(pending).rejects.toBe(reason);
  });

  it('decodes gzip, brotli and both deflate forms', async () => {
    expect((await safeFetch(`${base}/gzip`, opts)).body.toString()).toBe('<p>compressed with gzip</p>');
    expect((await safeFetch(`${base}/br`, opts)).body.toString()).toBe('<p>compressed with brotli</p>');
    expect((await safeFetch(`${base}/deflate`, opts)).body.toString()).toBe('<p>zlib deflate</p>');
    expect((await safeFetch(`${base}/deflate-raw`, opts)).body.toString()).toBe('<p>raw deflate</p>');
  });

  it('refuses an encoding it cannot decode', async () => {
    await expectCode(safeFetch(`${base}/zstd`, opts), 'UNSUPPORTED_CONTENT');
  });

  it('reports a refused connection as NETWORK', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expectCode(safeFetch(`http://127.0.0.1:${closedPort}/`, opts), 'NETWORK');
  });
});

/**
 * A test machine has no public address to redirect from, so these runs swap the address
 * policy (the seam safeFetch itself is built on): 127.0.0.1 plays a public site, names
 * resolve through a fake DNS, and everything else keeps the real private-address rule.
 */
describe('every hop is checked after resolution', () => {
  const dnsAnswers: Record<string, string[]> = {
    'public.test': ['127.0.0.1'],
    'internal.test': ['10.0.0.7'],
    'mixed.test': ['127.0.0.1', '192.168.0.10'],
  };
  const resolved: string[] = [];
  const policy: AddressPolicy = {
    resolve: async (hostname) => {
      resolved.push(hostname);
      const answers = dnsAnswers[hostname];
      if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
    isBlocked: (ip) => ip !== '127.0.0.1' && isPrivateAddress(ip),
  };
  const opts = { timeoutMs: 3_000 };

  beforeEach(() => {
    resolved.length = 0;
  });

  it('connects to the checked address of a public name', async () => {
    const res = await safeFetchWithPolicy(`http://public.test:${port}/`, opts, policy);
    expect(res.body.toString()).toBe('<h1>home</h1>');
    expect(resolved).toEqual(['public.test']);
  });

  it('refuses a redirect from a public site to a private literal address', async () => {
    const target = encodeURIComponent('http://169.254.169.254/latest/meta-data');
    await expectCode(safeFetchWithPolicy(`http://public.test:${port}/redirect-to?target=${target}`, opts, policy), 'PRIVATE_ADDRESS');
    expect(requests).toEqual(['/redirect-to']);
  });

  it('refuses a redirect to a name that resolves to a private address', async () => {
    const target = encodeURIComponent(`http://internal.test:${port}/`);
    await expectCode(safeFetchWithPolicy(`http://public.test:${port}/redirect-to?target=${target}`, opts, policy), 'PRIVATE_ADDRESS');
    expect(requests).toEqual(['/redirect-to']);
    expect(resolved).toEqual(['public.test', 'internal.test']);
  });

  it('refuses a name when any of its addresses is private', async () => {
    await expectCode(safeFetchWithPolicy(`http://mixed.test:${port}/`, opts, policy), 'PRIVATE_ADDRESS');
    expect(requests).toEqual([]);
  });

  it('resolves once per hop, so a changed answer cannot slip in after the check', async () => {
    let calls = 0;
    const rebinding: AddressPolicy = {
      // First answer public (127.0.0.1 here), any later one private: a second resolution
      // for the connection would reach 10.0.0.7 and fail with NETWORK, not succeed.
      resolve: async () => [{ address: calls++ === 0 ? '127.0.0.1' : '10.0.0.7', family: 4 }],
      isBlocked: policy.isBlocked,
    };
    const res = await safeFetchWithPolicy(`http://rebind.test:${port}/`, opts, rebinding);
    expect(res.status).toBe(200);
    expect(calls).toBe(1);
  });

  it('reports an unknown name as NETWORK', async () => {
    await expectCode(safeFetchWithPolicy(`http://nowhere.test:${port}/`, opts, policy), 'NETWORK');
  });
});
