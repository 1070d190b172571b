/**
 * Every file type of interface.md endpoint 6, uploaded through the REST direct-upload path
 * (endpoint 5: multipart POST with a real API key), processed by the real queue and workers,
 * ends `synched` with its text in the `chunks` table; PDF chunks carry their page numbers.
 * Damaged files and decompression bombs end in `error` with a readable message, quickly, and
 * the service keeps answering.
 */
import { randomBytes } from 'node:crypto';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { newOrganization } from './support/client.ts';
import { chunks, createDatastore, settled, sql, upload } from './support/ingest.ts';
import { MIME, makeCsv, makeDoc, makeDocx, makeJson, makeMarkdown, makePdf, makePptx, makeText, makeXlsx, makeZipBomb } from './support/samples.ts';

let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let store: string;

beforeAll(async () => {
  app = await startTestApp();
  org = await newOrganization(app.url, 'Files');
  store = await createDatastore(app, org.apiKey);
});
afterAll(async () => {
  await app?.close();
});

interface Case {
  kind: keyof typeof MIME;
  file: () => Promise<Buffer> | Buffer;
  /** Every one of these must appear in the stored chunk text. */
  expected: string[];
  /** Page numbers of the chunks, in order, for paged formats. */
  pages?: number[];
}

const cases: Case[] = [
  { kind: 'txt', file: () => makeText(), expected: ['Plain text sample: the warehouse opens at seven in the morning.'] },
  { kind: 'md', file: () => makeMarkdown(), expected: ['# Setup guide', 'Install the agent, then run it with `--verbose`.', '- step two'] },
  { kind: 'csv', file: () => makeCsv(), expected: ['product: Widget, large; price: 12.50; notes: ships in a crate', 'product: Gadget; price: 3.10; notes: plain'] },
  { kind: 'json', file: () => makeJson(), expected: ['catalog.name: Spare parts', 'catalog.items[0].sku: A-100', 'catalog.items[1].label: Wing nut'] },
  {
    kind: 'pdf',
    file: () => makePdf([['Alpha chapter: installation', 'Unpack the box carefully.'], [], ['Gamma chapter: warranty', 'Two years on every part.']], 'Manual'),
    expected: ['Alpha chapter: installation\nUnpack the box carefully.', 'Gamma chapter: warranty\nTwo years on every part.'],
    pages: [1, 3],
  },
  { kind: 'docx', file: () => makeDocx(['Hello from Word', 'Second &amp; last paragraph'], 'Letter'), expected: ['Hello from Word', 'Second & last paragraph'] },
  {
    kind: 'pptx',
    file: () => makePptx([{ text: [['Welcome ', 'to the deck'], ['Agenda &amp; goals']], notes: [['Say hello first']] }, { text: [] }, { text: [['Last slide']] }], 'Kickoff'),
    expected: ['Welcome to the deck\nAgenda & goals', 'Notes: Say hello first', 'Last slide'],
    pages: [1, 3],
  },
  {
    kind: 'xlsx',
    file: () => makeXlsx(),
    expected: ['Sheet: Costs\nItem: Rent, office; Amount: 1200; Due: 2024-01-31', 'Sheet: Notes\nRich text\nMerged once'],
    pages: [1, 2],
  },
];

describe('each datasource MIME type, uploaded over REST, reaches synched with its text', () => {
  it('covers exactly the eight types of interface.md', () => {
    expect(cases.map((c) => MIME[c.kind]).sort()).toEqual(
      [
        'text/csv',
        'text/plain',
        'text/markdown',
        'application/pdf',
        'application/json',
        'application/vnd.openxmlformats-officedocument.presentationml.presentation',
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      ].sort(),
    );
  });

  for (const c of cases) {
    it(`${c.kind} (${MIME[c.kind]})`, async () => {
      const data = await c.file();
      const name = `sample.${c.kind}`;
      const res = await upload(app, org.apiKey, store, { name, type: MIME[c.kind], data });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ type: 'file', name, status: 'unsynched', size: data.length });

      const done = await settled(app, org.apiKey, res.body.id);
      expect(done, done.errorMessage ?? '').toMatchObject({ status: 'synched', errorMessage: null });
      const rows = await chunks(app, res.body.id);
      expect(rows.length).toBe(done.chunkCount);
      expect(rows.map((r) => r.position)).toEqual(rows.map((_, i) => i));
      const text = rows.map((r) => r.text).join('\n');
      for (const expected of c.expected) expect(text).toContain(expected);
      for (const row of rows) expect(row.metadata).toMatchObject({ source: name, datasource_name: name, custom_id: null });

      if (c.pages) {
        expect(rows.map((r) => r.page)).toEqual(c.pages);
        expect(rows.map((r) => r.metadata.page)).toEqual(c.pages);
      } else {
        expect(rows.every((r) => r.page === null && !('page' in r.metadata))).toBe(true);
      }
    });
  }

  it('puts each PDF page in its own chunks, numbered by page, even when pages are long', async () => {
    const sentence = (p: number, i: number) => `Page ${p} sentence ${i} explains part ${i} of topic ${p} in some detail.`;
    const pages = [1, 2, 3].map((p) => Array.from({ length: 30 }, (_, i) => sentence(p, i)));
    const res = await upload(app, org.apiKey, store, { name: 'long.pdf', type: MIME.pdf, data: makePdf(pages) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await settled(app, org.apiKey, res.body.id)).status).toBe('synched');
    const rows = await chunks(app, res.body.id);
    expect(rows.length).toBeGreaterThan(3); // ~2,100 characters a page: several chunks each
    for (const row of rows) {
      const mentioned = new Set([...row.text.matchAll(/Page (\d) sentence/g)].map((m) => Number(m[1])));
      expect([...mentioned], row.text).toEqual([row.page]);
      expect(row.metadata.page).toBe(row.page);
    }
    expect(new Set(rows.map((r) => r.page))).toEqual(new Set([1, 2, 3]));
    // Every sentence of every page is stored.
    const all = rows.map((r) => r.text).join(' ');
    for (const p of [1, 2, 3]) for (let i = 0; i < 30; i++) expect(all).toContain(sentence(p, i));
  });

  it('refuses a .doc upload (not a datasource type) with 400 listing the supported types', async () => {
    const res = await upload(app, org.apiKey, store, { name: 'memo.doc', type: MIME.doc, data: makeDoc(['Legacy memo']) });
    expect(res.status).toBe(400);
    expect(res.body.error.details.supported).toEqual(expect.arrayContaining(cases.map((c) => MIME[c.kind])));
  });
});

describe('bad files end in error, quickly, and hurt nothing', () => {
  it('a corrupt PDF ends in error with a readable message and no chunks', async () => {
    const data = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(16 * 1024)]);
    const res = await upload(app, org.apiKey, store, { name: 'broken.pdf', type: MIME.pdf, data });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const done = await settled(app, org.apiKey, res.body.id);
    expect(done).toMatchObject({ status: 'error', chunkCount: 0, errorMessage: 'The PDF could not be read: it is damaged or encrypted.' });
    expect(await chunks(app, res.body.id)).toEqual([]);
  });

  /** Uploads the file, and while it is processed checks that /healthz keeps answering fast. */
  async function uploadWhileProbing(name: string, type: string, data: Buffer) {
    const started = performance.now();
    const res = await upload(app, org.apiKey, store, { name, type, data });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    let slowest = 0;
    let probing = true;
    const probes = (async () => {
      while (probing) {
        const t = performance.now();
        const health = await fetch(`${app.url}/healthz`);
        expect(health.status).toBe(200);
        slowest = Math.max(slowest, performance.now() - t);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const done = await settled(app, org.apiKey, res.body.id, 15_000).finally(() => (probing = false));
    await probes;
    return { done, seconds: (performance.now() - started) / 1000, slowestProbeMs: slowest, id: res.body.id as string };
  }

  it('a zip bomb .docx (50 MB in one small entry) ends in error within seconds', async () => {
    const bomb = await makeZipBomb(50);
    expect(bomb.length).toBeLessThan(200 * 1024);
    const { done, seconds, slowestProbeMs, id } = await uploadWhileProbing('bomb.docx', MIME.docx, bomb);
    expect(done.status).toBe('error');
    expect(done.errorMessage).toBe('The file was refused: its compressed contents would expand to an unsafe size or number of files.');
    expect(seconds).toBeLessThan(5);
    expect(slowestProbeMs).toBeLessThan(1000);
    expect(await chunks(app, id)).toEqual([]);
  });

  it('a zip bomb .docx that lies about its sizes is stopped while inflating, in the loader worker', async () => {
    const zip = new JSZip().file('word/document.xml', Buffer.alloc(40 * 1024 * 1024, 0x20), { createFolders: false });
    const data = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 9 } });
    // Declare 1,000 bytes in the local header and the central directory: the directory check passes.
    data.writeUInt32LE(1000, 22);
    data.writeUInt32LE(1000, data.indexOf('PK\x01\x02') + 24);
    const { done, seconds, slowestProbeMs } = await uploadWhileProbing('liar.docx', MIME.docx, data);
    expect(done.status).toBe('error');
    expect(done.errorMessage).toMatch(/unsafe size/);
    expect(seconds).toBeLessThan(5);
    expect(slowestProbeMs).toBeLessThan(1000);
  });

  it('the service still ingests normally afterwards', async () => {
    const res = await upload(app, org.apiKey, store, { name: 'after.txt', type: MIME.txt, data: 'Still working after the bombs.' });
    expect((await settled(app, org.apiKey, res.body.id)).status).toBe('synched');
    expect((await fetch(`${app.url}/readyz`)).status).toBe(200);
    const [{ n }] = await sql(app, `select count(*)::int as n from datasources where status in ('pending', 'running', 'unsynched')`);
    expect(n).toBe(0);
  });
});
