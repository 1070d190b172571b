/**
 * Hostile inputs against a real service process (`node src/main.ts`, as `npm start` runs it,
 * default limits): a 100 MB PDF (refused at the upload cap while it arrives), zip bombs in each Office format the loaders read (honest ones, ones that lie
 * about their sizes, and ones that stay just under every declared-size limit), a 10,000-URL
 * sitemap and a web page that never ends. All of them arrive at once, so their memory adds up.
 *
 * Each ends `synched` or `error` with a message a person can act on, and the process's peak
 * resident memory (VmHWM from /proc: the kernel's own high-water mark, which no sampling can
 * miss; reset once the service is at rest) stays within the bounds documented in
 * docs/limits.md. A page that trickles forever is cut by the fetcher's deadline, tested in
 * test/safe-fetch.test.ts; here its retries would only add minutes.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from './support/app.ts';
import { createTestDatabase } from './support/app.ts';
import { endpointEnv } from './support/service.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { createDatastore, settled, upload, type DatasourceView } from './support/ingest.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { freePort, killAll, spawnMain, type ServiceProcess } from './support/process.ts';
import { MIME, makePdf } from './support/samples.ts';
import { writeZip } from './support/zip-writer.ts';
import { waitFor } from './support/wait.ts';

const MB = 1024 * 1024;
/**
 * The documented bounds (docs/limits.md#memory): what the hostile inputs may add to the
 * process's resident memory at rest, and, on PostgreSQL, the whole process's peak. With the
 * embedded PGlite the database lives in the process (about 0.8 GiB at rest), so only the
 * growth is bounded there.
 */
const GROWTH_BOUND_BYTES = 512 * MB;
const PROCESS_BOUND_BYTES = 1024 * MB;
const ON_POSTGRES = !!process.env.TEST_DATABASE_URL;

/** Peak (since the last reset) and current resident memory of a process, from the kernel. */
function residentMemory(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { peak: kb('VmHWM'), now: kb('VmRSS') };
}

/** Starts the peak afresh from the current size (Linux: "5" to clear_refs resets VmHWM). */
function resetPeak(pid: number) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** A valid one-page PDF padded to `bytes` with an unreferenced stream object of random bytes. */
function paddedPdf(bytes: number): Buffer {
  const small = makePdf([['The padded handbook: the only text on its only page.']]).toString('latin1');
  const xrefAt = small.lastIndexOf('xref\n');
  const size = bytes - small.length; // a little more than `bytes` in all, with the object's own syntax
  const head = `999 0 obj\n<< /Length ${size} >>\nstream\n`;
  const tail = '\nendstream\nendobj\n';
  const padding = Buffer.concat([Buffer.from(small.slice(0, xrefAt) + head, 'latin1'), randomBytes(size), Buffer.from(tail, 'latin1')]);
  const startxref = /startxref\n(\d+)/.exec(small)!;
  const rest = small.slice(xrefAt).replace(`startxref\n${startxref[1]}`, `startxref\n${padding.length}`);
  return Buffer.concat([padding, Buffer.from(rest, 'latin1')]);
}

const spaces = (mb: number) => Buffer.alloc(mb * MB, 0x20);

/** One entry of `mb` MB, declared honestly: refused from the directory, before any inflating. */
const honestBomb = (entry: string, mb: number) => writeZip([{ name: entry, data: spaces(mb) }]);
/** One entry of `mb` MB whose headers declare 1,000 bytes: only inflating can tell. */
const lyingBomb = (entry: string, mb: number) => writeZip([{ name: entry, data: spaces(mb), declare: 1000 }]);
/** Entries of 9 MB each, under the per-entry ratio rule's 10 MB floor, `count` of them. */
const manyEntries = (prefix: string, count: number) => {
  const data = spaces(9);
  return writeZip(Array.from({ length: count }, (_, i) => ({ name: `${prefix}${i + 1}.xml`, data })));
};

const MAIN_PART = { docx: 'word/document.xml', xlsx: 'xl/worksheets/sheet1.xml', pptx: 'ppt/slides/slide1.xml' } as const;
const PART_PREFIX = { docx: 'word/part', xlsx: 'xl/worksheets/sheet', pptx: 'ppt/slides/slide' } as const;

describe('memory bounds: hostile files and pages against a service process', () => {
  let embeddings: OpenAiTestServer;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let service: ServiceProcess;
  let app: Pick<TestApp, 'url' | 'api'>;
  let site: http.Server;
  let siteUrl = '';
  const openStreams = new Set<http.ServerResponse>();

  beforeAll(async () => {
    embeddings = await startOpenAiTestServer();
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentbase-bounds-'));

    // A site with a 10,000-URL sitemap, ordinary pages, and a page that never ends.
    site = http.createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/sitemap.xml') {
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Array.from({ length: 10_000 }, (_, i) => `<url><loc>${siteUrl}/page/${i}</loc></url>`).join('')}</urlset>`);
      } else if (url.startsWith('/page/')) {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<html><head><title>Page ${url}</title></head><body><article><p>Page ${url} of the large site explains one topic in a sentence.</p></article></body></html>`);
      } else if (url === '/endless') {
        openStreams.add(res);
        res.on('close', () => openStreams.delete(res));
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<html><body><article><p>');
        const chunk = Buffer.alloc(64 * 1024, 'endless words ');
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

    const port = await freePort();
    service = spawnMain({
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      ALLOW_PRIVATE_URLS: 'true',
      ...endpointEnv(embeddings.url),
      RATE_LIMIT_IP_PER_MINUTE: '100000',
    });
    await service.waitForLog('listening', 120_000);
    app = { url: `http://127.0.0.1:${port}`, api: `http://127.0.0.1:${port}/api` };
  }, 150_000);

  afterAll(async () => {
    killAll();
    for (const res of openStreams) res.destroy();
    await new Promise((r) => site?.close(r));
    await embeddings?.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses or reads every hostile input with a clear message, adding under 512 MiB to resident memory (under 1 GiB in all on PostgreSQL)', async () => {
    type Case = { name: string; id: string; expect: (ds: DatasourceView) => void };
    const cases: Case[] = [];
    const file = async (name: string, type: string, data: Buffer, expectation: Case['expect']) => {
      const res = await upload(app as TestApp, org.apiKey, store, { name, type, data }).catch((error) => {
        throw new Error(`${name}: ${error}; service exit code ${service.child.exitCode} signal ${service.child.signalCode}, logs: ${JSON.stringify(service.logs().filter((l) => l.level !== 'info').slice(-3)).slice(-3000)}`, { cause: error });
      });
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
      cases.push({ name, id: res.body.id, expect: expectation });
    };
    const refused = (pattern: RegExp) => (ds: DatasourceView) => {
      expect(ds.status).toBe('error');
      expect(ds.errorMessage).toMatch(pattern);
    };

    // Every payload is built before the first upload: building takes seconds, and a kept-alive
    // socket left idle that long is closed by the server under the next request.
    const pdf = paddedPdf(100 * MB);
    expect(pdf.length).toBeGreaterThanOrEqual(100 * MB);
    const files: [string, string, Buffer, Case['expect']][] = [];
    for (const format of ['docx', 'xlsx', 'pptx'] as const) {
      files.push(
        [`bomb.${format}`, MIME[format], honestBomb(MAIN_PART[format], 400), refused(/unsafe size or number of files/)],
        [`liar.${format}`, MIME[format], lyingBomb(MAIN_PART[format], 300), refused(/unsafe size or number of files/)],
        // 27 x 9 MB = 243 MB: no entry breaks a rule of its own, their sum does.
        [`many.${format}`, MIME[format], manyEntries(PART_PREFIX[format], 27), refused(/unsafe size or number of files/)],
      );
    }
    const org = await newOrganization(app.url, 'Bounds');
    const store = await createDatastore(app as TestApp, org.apiKey);
    const rest = residentMemory(service.child.pid!).now;
    resetPeak(service.child.pid!);
    // At the default UPLOAD_MAX_BYTES (10 MB) the PDF is refused while it arrives: the service
    // reads and drops the rest of the body, so the client gets its answer instead of a reset.
    const tooLarge = await upload(app as TestApp, org.apiKey, store, { name: 'padded.pdf', type: MIME.pdf, data: pdf });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: 'The file is larger than the limit of 10485760 bytes.' });
    for (const [name, type, data, expectation] of files) await file(name, type, data, expectation);

    const web = async (name: string, body: Record<string, unknown>, expectation: Case['expect']) => {
      const res = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, name, ...body } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      cases.push({ name, id: res.body.id, expect: expectation });
    };
    await web('endless page', { type: 'web_page', config: { source_url: `${siteUrl}/endless` } }, refused(/over the cap of/));
    const siteStore = await createDatastore(app as TestApp, org.apiKey, 'private', 'large site');
    const crawl = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: siteStore, type: 'web_site', name: 'large site', config: { sitemap: `${siteUrl}/sitemap.xml` } } });
    expect(crawl.status, JSON.stringify(crawl.body)).toBe(200);

    const outcomes = await Promise.all(cases.map(async (c) => ({ c, ds: await settled(app as TestApp, org.apiKey, c.id, 120_000) })));
    for (const { c, ds } of outcomes) {
      try {
        c.expect(ds);
      } catch (error) {
        throw new Error(`${c.name}: ${JSON.stringify(ds)}\n${(error as Error).message}`);
      }
    }

    // The 10,000-URL sitemap: the organization's page cap (25 by default) taken, each page read.
    expect((await settled(app as TestApp, org.apiKey, crawl.body.id, 30_000)).status).toBe('synched');
    const pages = async () => {
      const res = await gql(app.url, `query($d: ID!) { datasources(datastoreId: $d, first: 100, type: web_page) { nodes { status errorMessage } } }`, { d: siteStore }, { token: org.apiKey });
      return res.data.datasources.nodes as { status: string; errorMessage: string | null }[];
    };
    await waitFor(async () => (await pages()).every((p) => p.status === 'synched'), 60_000, 'the crawled pages synched');
    expect(await pages()).toHaveLength(25);

    const { peak, now } = residentMemory(service.child.pid!);
    console.log(`memory-bounds (${ON_POSTGRES ? 'PostgreSQL' : 'PGlite'}): resident memory at rest ${Math.round(rest / MB)} MiB, peak ${Math.round(peak / MB)} MiB (+${Math.round((peak - rest) / MB)}), now ${Math.round(now / MB)} MiB`);
    expect(peak - rest).toBeLessThan(GROWTH_BOUND_BYTES);
    if (ON_POSTGRES) expect(peak).toBeLessThan(PROCESS_BOUND_BYTES);

    // Still serving, and nothing left in flight.
    expect((await fetch(`${app.url}/readyz`)).status).toBe(200);
    const after = await upload(app as TestApp, org.apiKey, store, { name: 'after.txt', type: MIME.txt, data: 'Still reading files after the hostile ones.' });
    expect((await settled(app as TestApp, org.apiKey, after.body.id)).status).toBe('synched');
  }, 240_000);
});
