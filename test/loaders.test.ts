/**
 * Document loaders, on real files built by the tests (test/support/samples.ts): a hand-written
 * PDF, OOXML packages zipped with JSZip or written by exceljs, and a Word 97 binary (.doc) laid
 * out from the [MS-CFB] and [MS-DOC] specifications, since no office suite exists on the test
 * machines to make one. Every load goes through the worker, as in production.
 */
import { randomBytes } from 'node:crypto';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import {
  DATASOURCE_MIME_TYPES,
  EXTRA_MIME_TYPES,
  extensionFor,
  LoaderError,
  loadDocument,
  mimeTypeFromFileName,
  normalizeMimeType,
  type LoaderErrorCode,
} from '../src/ingestion/loaders/index.ts';
import { inspectZip, ZIP_MAX_ENTRIES } from '../src/ingestion/loaders/zip-guard.ts';
import { formatOf, normalizeFileType, sniffType } from '../src/universal/formats.ts';
import { MIME as T, makeDoc, makeDocx, makePdf, makePptx, makeXlsx } from './support/samples.ts';

async function failure(promise: Promise<unknown>): Promise<LoaderError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LoaderError);
    return error as LoaderError;
  }
  throw new Error('expected a LoaderError');
}

async function expectCode(promise: Promise<unknown>, code: LoaderErrorCode): Promise<LoaderError> {
  const error = await failure(promise);
  expect(error.code, error.message).toBe(code);
  return error;
}

// ---------------------------------------------------------------------------------------------

describe('MIME types', () => {
  it('lists the datasource types and the extra .doc type', () => {
    expect([...DATASOURCE_MIME_TYPES].sort()).toEqual([T.json, T.pdf, T.pptx, T.xlsx, T.docx, T.csv, T.md, T.txt].sort());
    expect(EXTRA_MIME_TYPES).toEqual([T.doc]);
  });

  it('maps file names by extension', () => {
    expect(mimeTypeFromFileName('data.CSV')).toBe(T.csv);
    expect(mimeTypeFromFileName('notes.txt')).toBe(T.txt);
    expect(mimeTypeFromFileName('README.md')).toBe(T.md);
    expect(mimeTypeFromFileName('guide.markdown')).toBe(T.md);
    expect(mimeTypeFromFileName('C:\\docs\\report.final.pdf')).toBe(T.pdf);
    expect(mimeTypeFromFileName('a.json')).toBe(T.json);
    expect(mimeTypeFromFileName('deck.pptx')).toBe(T.pptx);
    expect(mimeTypeFromFileName('letter.docx')).toBe(T.docx);
    expect(mimeTypeFromFileName('sheet.xlsx')).toBe(T.xlsx);
    expect(mimeTypeFromFileName('old.doc')).toBe(T.doc);
    expect(mimeTypeFromFileName('photo.png')).toBeNull();
    expect(mimeTypeFromFileName('Makefile')).toBeNull();
    expect(mimeTypeFromFileName('dir.pdf/file')).toBeNull();
  });

  it('normalizes parameters, case and aliases', () => {
    expect(normalizeMimeType('text/plain; charset=utf-8')).toBe(T.txt);
    expect(normalizeMimeType(' Application/PDF ')).toBe(T.pdf);
    expect(normalizeMimeType('text/x-markdown')).toBe(T.md);
    expect(normalizeMimeType('application/csv')).toBe(T.csv);
    expect(normalizeMimeType('image/png')).toBe('image/png');
  });

  it('is one table with the universal processor: extensions, MIME types, labels and magic bytes agree', async () => {
    for (const mime of DATASOURCE_MIME_TYPES) expect(mimeTypeFromFileName(`upload${extensionFor(mime)}`)).toBe(mime);
    expect(extensionFor('image/png')).toBe('.png');
    expect(extensionFor('application/x-unknown')).toBe('');
    expect(formatOf('docx')).toMatchObject({ mimeType: T.docx, label: 'Word document' });
    expect(formatOf('doc')).toMatchObject({ mimeType: T.doc, label: 'Word document (.doc)' });
    expect(formatOf('pdf').mimeType).toBe(T.pdf);
    expect(normalizeFileType('.TIF')).toBe('tiff');
    expect(normalizeFileType('jpeg')).toBe('jpeg');
    expect(normalizeFileType('markdown')).toBeNull();
    // A PDF header after some junk within the first kilobyte: both views take it, a later one neither.
    const pdf = makePdf([['Junk first, then a real PDF.']]);
    const late = Buffer.concat([Buffer.alloc(1100, 0x20), pdf]);
    const early = Buffer.concat([Buffer.alloc(100, 0x20), pdf]);
    expect(sniffType(early)).toBe('pdf');
    expect((await loadDocument(early, T.pdf)).text).toContain('Junk first');
    expect(formatOf('pdf').sniff(late)).toBe(false);
    expect((await failure(loadDocument(late, T.pdf))).code).toBe('CORRUPT');
  });
});

describe('loadDocument', () => {
  it('reads plain text: BOM stripped, UTF-16 and Windows-1252 decoded', async () => {
    const utf8 = await loadDocument(Buffer.from('\ufeffHéllo\r\nworld\n'), 'text/plain; charset=utf-8');
    expect(utf8.text).toBe('Héllo\nworld\n');
    expect(utf8.pages).toBeUndefined();
    const utf16 = await loadDocument(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Grüße', 'utf16le')]), T.txt);
    expect(utf16.text).toBe('Grüße');
    const latin = await loadDocument(Buffer.from('caf\xe9 \x80', 'latin1'), T.txt);
    expect(latin.text).toBe('café €');
  });

  it('rejects binary content labelled as text', async () => {
    const error = await expectCode(loadDocument(Buffer.from('abc\u0000def'), T.txt), 'CORRUPT');
    expect(error.message).toMatch(/binary/);
  });

  it('reads markdown as written, with the first heading as title', async () => {
    const doc = await loadDocument(Buffer.from('Intro line\n\n# Setup guide\n\n- step *one*\n'), 'text/x-markdown');
    expect(doc.text).toContain('- step *one*');
    expect(doc.title).toBe('Setup guide');
  });

  it('reads CSV with a BOM, quoted commas and newlines, as "column: value" lines', async () => {
    const csv = '\ufeffname,city,notes\n"Smith, John",Paris,"line one\nline two"\nAnn,,"said ""hi"""\n';
    const doc = await loadDocument(Buffer.from(csv), 'application/csv');
    expect(doc.text).toBe('name: Smith, John; city: Paris; notes: line one line two\nname: Ann; notes: said "hi"');
    expect(doc.metadata).toMatchObject({ rows: 3, columns: 3 });
  });

  it('reads CSV without a header row as tab-separated lines, detecting ";"', async () => {
    const doc = await loadDocument(Buffer.from('1;2;3\n4;5;6\n'), T.csv);
    expect(doc.text).toBe('1\t2\t3\n4\t5\t6');
  });

  it('reads JSON as "path: value" lines, and JSON Lines', async () => {
    const json = { title: 'Catalog', items: [{ id: 1, tags: ['a', 'b'] }, { 'odd key': null }], empty: {} };
    const doc = await loadDocument(Buffer.from(JSON.stringify(json, null, 2)), T.json);
    expect(doc.text).toBe(['title: Catalog', 'items[0].id: 1', 'items[0].tags[0]: a', 'items[0].tags[1]: b', 'items[1]["odd key"]: null'].join('\n'));
    const lines = await loadDocument(Buffer.from('{"a":1}\n{"a":2}\n'), T.json);
    expect(lines.text).toBe('[0].a: 1\n[1].a: 2');
    expect(lines.metadata).toMatchObject({ format: 'jsonl' });
    await expectCode(loadDocument(Buffer.from('{"a": '), T.json), 'CORRUPT');
  });

  it('reads a PDF page by page, keeping page numbers', async () => {
    const pdf = makePdf([['First page title', 'Alpha (one)'], [], ['Third page: Gamma']], 'Quarterly report');
    const doc = await loadDocument(pdf, T.pdf);
    expect(doc.pages).toEqual([
      { page: 1, text: 'First page title\nAlpha (one)' },
      { page: 3, text: 'Third page: Gamma' },
    ]);
    expect(doc.text).toBe('First page title\nAlpha (one)\n\nThird page: Gamma');
    expect(doc.title).toBe('Quarterly report');
    expect(doc.metadata).toMatchObject({ pageCount: 3 });
  });

  it('says EMPTY for a PDF without any text (scanned)', async () => {
    const error = await expectCode(loadDocument(makePdf([[], []]), T.pdf), 'EMPTY');
    expect(error.message).toMatch(/scanned/);
  });

  it('reads a .docx', async () => {
    const doc = await loadDocument(await makeDocx(['Hello from Word', 'Second &amp; last paragraph'], 'Letter'), T.docx);
    expect(doc.text).toBe('Hello from Word\n\nSecond & last paragraph');
    expect(doc.title).toBe('Letter');
  });

  it('keeps the heading styles of a .docx as Markdown headings, for the chunks below them', async () => {
    const data = await makeDocx([{ heading: 1, text: 'Handbook' }, { heading: 2, text: 'Leave' }, 'Staff get 25 days a year.', { heading: 2, text: 'Travel' }, 'Trains under four hours.']);
    const doc = await loadDocument(data, T.docx);
    expect(doc.text).toBe('# Handbook\n\n## Leave\n\nStaff get 25 days a year.\n\n## Travel\n\nTrains under four hours.');
  });

  it('reads a .pptx in deck order, one page per slide, with speaker notes', async () => {
    const pptx = await makePptx(
      [
        { text: [['Welcome ', 'to the deck'], ['Agenda &amp; goals']], notes: [['Say hello first']] },
        { text: [] },
        { text: [['Last slide']] },
      ],
      'Kickoff',
    );
    const doc = await loadDocument(pptx, T.pptx);
    expect(doc.pages).toEqual([
      { page: 1, text: 'Welcome to the deck\nAgenda & goals\n\nNotes: Say hello first' },
      { page: 3, text: 'Last slide' },
    ]);
    expect(doc.title).toBe('Kickoff');
    expect(doc.metadata).toMatchObject({ pageCount: 3, slidesWithNotes: 1 });
  });

  it('reads a .xlsx: one page per sheet, formula results, dates, rich text, merged cells', async () => {
    const doc = await loadDocument(await makeXlsx(), T.xlsx);
    expect(doc.pages).toEqual([
      { page: 1, text: 'Sheet: Costs\nItem: Rent, office; Amount: 1200; Due: 2024-01-31\nItem: Total; Amount: 1200' },
      { page: 2, text: 'Sheet: Notes\nRich text\nMerged once\nExample site' },
    ]);
    expect(doc.title).toBe('Budget 2024');
    expect(doc.metadata).toEqual({ sheetNames: ['Costs', 'Notes', 'Empty'], rows: 6 });
  });

  it('reads a Word 97 .doc', async () => {
    const doc = await loadDocument(makeDoc(['Legacy memo', 'Second paragraph']), T.doc);
    expect(doc.text).toBe('Legacy memo\nSecond paragraph');
  });

  it('refuses unknown types', async () => {
    const error = await expectCode(loadDocument(Buffer.from('x'), 'image/png'), 'UNSUPPORTED_TYPE');
    expect(error.message).toBe('Files of type image/png are not supported.');
  });

  it('says EMPTY for empty files and documents without text', async () => {
    await expectCode(loadDocument(Buffer.alloc(0), T.txt), 'EMPTY');
    await expectCode(loadDocument(Buffer.from(' \n\t\n'), T.md), 'EMPTY');
    const error = await expectCode(loadDocument(await makeDocx(['', '  ']), T.docx), 'EMPTY');
    expect(error.message).toBe('The Word document contains no text.');
  });

  it('says CORRUPT for random bytes labelled as PDF, Office or .doc', async () => {
    const noise = randomBytes(8192);
    const pdf = await expectCode(loadDocument(noise, T.pdf), 'CORRUPT');
    expect(pdf.message).toBe('The PDF could not be read: it is damaged or encrypted.');
    // Past the header check, so pdf.js itself has to fail (in the worker).
    await expectCode(loadDocument(Buffer.concat([Buffer.from('%PDF-1.7\n'), noise]), T.pdf), 'CORRUPT');
    const docx = await expectCode(loadDocument(noise, T.docx), 'CORRUPT');
    expect(docx.message).toBe('The Word document could not be read: it is damaged or password-protected.');
    await expectCode(loadDocument(noise, T.xlsx), 'CORRUPT');
    await expectCode(loadDocument(noise, T.doc), 'CORRUPT');
    // A real ZIP that is not a Word document fails in the parser.
    const zip = new JSZip().file('hello.txt', 'hi');
    await expectCode(loadDocument(await zip.generateAsync({ type: 'nodebuffer' }), T.docx), 'CORRUPT');
  });

  it('refuses text inputs too big for the worker heap before parsing', async () => {
    const data = Buffer.alloc(9 * 1024 * 1024, 'a');
    await expectCode(loadDocument(data, T.csv, { maxMemoryMb: 32 }), 'TOO_LARGE');
    await expectCode(loadDocument(data, T.txt, { maxTextChars: 1000 }), 'TOO_LARGE');
  });

  it('says TOO_LARGE when the text exceeds maxTextChars', async () => {
    const csv = Buffer.from(`a,b\n${'1,2\n'.repeat(200)}`);
    const error = await expectCode(loadDocument(csv, T.csv, { maxTextChars: 100 }), 'TOO_LARGE');
    expect(error.message).toBe('The document contains too much text (more than 100 characters).');
  });
});

describe('safety', () => {
  it('refuses a ZIP with too many entries before parsing', async () => {
    const zip = new JSZip();
    for (let i = 0; i <= ZIP_MAX_ENTRIES; i++) zip.file(`f${i}`, '');
    const data = await zip.generateAsync({ type: 'nodebuffer', compression: 'STORE' });
    const started = performance.now();
    await expectCode(loadDocument(data, T.docx), 'ZIP_BOMB');
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('refuses a highly compressed 50 MB entry before parsing', async () => {
    const zip = new JSZip().file('xl/worksheets/sheet1.xml', Buffer.alloc(50 * 1024 * 1024, 0x20));
    const data = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 1 } });
    expect(data.length).toBeLessThan(1024 * 1024);
    const started = performance.now();
    const error = await expectCode(loadDocument(data, T.xlsx), 'ZIP_BOMB');
    expect(performance.now() - started).toBeLessThan(500);
    expect(error.message).toMatch(/unsafe size/);
  });

  it('refuses a total declared size over the limit, without a suspicious ratio', async () => {
    const zip = new JSZip();
    for (let i = 0; i < 3; i++) zip.file(`part${i}.xml`, 'x');
    const data = await zip.generateAsync({ type: 'nodebuffer', compression: 'STORE' });
    // Rewrite each central directory record to declare 80 MB, stored (ratio 1).
    for (let at = data.indexOf('PK\x01\x02'); at >= 0; at = data.indexOf('PK\x01\x02', at + 4)) {
      data.writeUInt32LE(80 * 1024 * 1024, at + 20);
      data.writeUInt32LE(80 * 1024 * 1024, at + 24);
    }
    expect(() => inspectZip(data)).toThrow(expect.objectContaining({ code: 'ZIP_BOMB' }));
    expect(inspectZip(await makeDocx(['ok'])).entries).toBeGreaterThanOrEqual(4);
  });

  it('refuses, in the worker, a ZIP whose entry expands beyond its declared size', async () => {
    const zip = new JSZip().file('word/document.xml', Buffer.alloc(20 * 1024 * 1024, 0x20), { createFolders: false });
    const data = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 1 } });
    // Declare 1,000 bytes in both the local header and the central directory: the directory
    // check alone now passes.
    data.writeUInt32LE(1000, 22);
    const central = data.indexOf('PK\x01\x02');
    data.writeUInt32LE(1000, central + 24);
    expect(inspectZip(data).totalUncompressedBytes).toBe(1000);
    await expectCode(loadDocument(data, T.docx), 'ZIP_BOMB');
  });

  it('terminates a parse that runs past timeoutMs, and keeps working', async () => {
    // ~24 MB of CSV: parsing takes a few seconds, the worker itself starts in well under one.
    const rows = Array.from({ length: 600_000 }, (_, i) => `${i},"name ${i}","a note, with a comma"`);
    const big = Buffer.from(`id,name,notes\n${rows.join('\n')}`);
    const started = performance.now();
    const error = await expectCode(loadDocument(big, T.csv, { timeoutMs: 800, maxTextChars: 1e9 }), 'TIMEOUT');
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(790);
    expect(elapsed).toBeLessThan(1500);
    expect(error.message).toBe('The document took too long to read (over 0.8 s).');
    const after = await loadDocument(Buffer.from('still alive'), T.txt);
    expect(after.text).toBe('still alive');
  });

  it('says TOO_LARGE when the worker runs out of its memory limit, and keeps working', async () => {
    // 7 MB of JSON giving 1.5 million "path: value" lines: far more than a 32 MB heap holds.
    const json = Buffer.from(`[${'{"k":[1,2,3]},'.repeat(500_000)}0]`);
    const error = await expectCode(loadDocument(json, T.json, { maxMemoryMb: 32, maxTextChars: 1e9 }), 'TOO_LARGE');
    expect(error.message).toMatch(/memory/);
    const after = await loadDocument(Buffer.from('{"ok":true}'), T.json);
    expect(after.text).toBe('ok: true');
  });
});
