/**
 * Document loaders, on real files built here: a hand-written PDF, OOXML packages zipped with
 * JSZip or written by exceljs, and a Word 97 binary (.doc) laid out from the [MS-CFB] and
 * [MS-DOC] specifications, since no office suite exists on the test machines to make one.
 * Every load goes through the worker, as in production.
 */
import { randomBytes } from 'node:crypto';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import {
  DATASOURCE_MIME_TYPES,
  EXTRA_MIME_TYPES,
  LoaderError,
  loadDocument,
  mimeTypeFromFileName,
  normalizeMimeType,
  type LoaderErrorCode,
} from '../src/ingestion/loaders/index.ts';
import { inspectZip, ZIP_MAX_ENTRIES } from '../src/ingestion/loaders/zip-guard.ts';

const T = {
  csv: 'text/csv',
  txt: 'text/plain',
  md: 'text/markdown',
  pdf: 'application/pdf',
  json: 'application/json',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  doc: 'application/msword',
};

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
// Builders

/** A PDF with one Helvetica text object per page; xref offsets are computed, so it is valid. */
function makePdf(pages: string[][], title?: string): Buffer {
  const esc = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 5 + i * 2);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  objects[4] = `<< /Producer (loaders test)${title ? ` /Title (${esc(title)})` : ''} >>`;
  pages.forEach((lines, i) => {
    const content = lines.length
      ? `BT /F1 14 Tf 18 TL 72 720 Td ${lines.map((l) => `(${esc(l)}) Tj T*`).join(' ')} ET`
      : '';
    objects[5 + i * 2] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${6 + i * 2} 0 R >>`;
    objects[6 + i * 2] = `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`;
  });
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(out, 'latin1');
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R /Info 4 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const CORE_NS =
  'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"';

function contentTypes(overrides: Record<string, string>): string {
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
    '<Default Extension="xml" ContentType="application/xml"/>' +
    Object.entries(overrides)
      .map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`)
      .join('') +
    '</Types>'
  );
}

function rels(list: [id: string, type: string, target: string][]): string {
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
    list.map(([id, type, target]) => `<Relationship Id="${id}" Type="${type}" Target="${target}"/>`).join('') +
    '</Relationships>'
  );
}

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

async function makeDocx(paragraphs: string[], title?: string): Promise<Buffer> {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    contentTypes({
      '/word/document.xml': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml',
      '/docProps/core.xml': 'application/vnd.openxmlformats-package.core-properties+xml',
    }),
  );
  zip.file(
    '_rels/.rels',
    rels([
      ['rId1', `${REL}/officeDocument`, 'word/document.xml'],
      ['rId2', 'http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties', 'docProps/core.xml'],
    ]),
  );
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${p}</w:t></w:r></w:p>`).join('');
  zip.file(
    'word/document.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
  );
  if (title) zip.file('docProps/core.xml', `<cp:coreProperties ${CORE_NS}><dc:title>${title}</dc:title></cp:coreProperties>`);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

const SLIDE_NS =
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';

/** Paragraphs of runs: [["Hello ", "world"]] is one paragraph of two runs. */
function slideXml(root: 'p:sld' | 'p:notes', paragraphs: string[][], slideNumber?: number): string {
  const ps = paragraphs.map((runs) => `<a:p>${runs.map((t) => `<a:r><a:t>${t}</a:t></a:r>`).join('')}</a:p>`).join('');
  const num = slideNumber ? `<a:p><a:fld id="{1}" type="slidenum"><a:t>${slideNumber}</a:t></a:fld></a:p>` : '';
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><${root} ${SLIDE_NS}><p:cSld><p:spTree><p:sp><p:txBody><a:bodyPr/>${ps}${num}</p:txBody></p:sp></p:spTree></p:cSld></${root}>`;
}

/**
 * Slides as given, in deck order; the part names are numbered in reverse, as happens after
 * slides are moved, so the deck order must come from presentation.xml.
 */
async function makePptx(slides: { text: string[][]; notes?: string[][] }[], title?: string): Promise<Buffer> {
  const zip = new JSZip();
  const n = slides.length;
  const partNumber = (i: number) => n - i;
  const overrides: Record<string, string> = {
    '/ppt/presentation.xml': 'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml',
  };
  slides.forEach((slide, i) => {
    const num = partNumber(i);
    overrides[`/ppt/slides/slide${num}.xml`] = 'application/vnd.openxmlformats-officedocument.presentationml.slide+xml';
    zip.file(`ppt/slides/slide${num}.xml`, slideXml('p:sld', slide.text, i + 1));
    if (slide.notes) {
      zip.file(`ppt/slides/_rels/slide${num}.xml.rels`, rels([['rId1', `${REL}/notesSlide`, `../notesSlides/notesSlide${num}.xml`]]));
      zip.file(`ppt/notesSlides/notesSlide${num}.xml`, slideXml('p:notes', slide.notes, i + 1));
    }
  });
  zip.file('[Content_Types].xml', contentTypes(overrides));
  zip.file('_rels/.rels', rels([['rId1', `${REL}/officeDocument`, 'ppt/presentation.xml']]));
  zip.file(
    'ppt/presentation.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:presentation ${SLIDE_NS}><p:sldIdLst>${slides
      .map((_, i) => `<p:sldId id="${256 + i}" r:id="rId${10 + i}"/>`)
      .join('')}</p:sldIdLst></p:presentation>`,
  );
  zip.file(
    'ppt/_rels/presentation.xml.rels',
    rels(slides.map((_, i) => [`rId${10 + i}`, `${REL}/slide`, `slides/slide${partNumber(i)}.xml`])),
  );
  if (title) zip.file('docProps/core.xml', `<cp:coreProperties ${CORE_NS}><dc:title>${title}</dc:title></cp:coreProperties>`);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

async function makeXlsx(): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  wb.title = 'Budget 2024';
  const costs = wb.addWorksheet('Costs');
  costs.addRow(['Item', 'Amount', 'Due']);
  costs.addRow(['Rent, office', 1200, new Date(Date.UTC(2024, 0, 31))]);
  costs.addRow(['Total', { formula: 'SUM(B2:B2)', result: 1200 }]);
  const notes = wb.addWorksheet('Notes');
  notes.getCell('B2').value = { richText: [{ text: 'Rich ' }, { text: 'text', font: { bold: true } }] };
  notes.mergeCells('B3:D3');
  notes.getCell('B3').value = 'Merged once';
  notes.getCell('B4').value = { text: 'Example site', hyperlink: 'https://example.com' };
  wb.addWorksheet('Empty');
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/**
 * A Word 97 binary document: a compound file ([MS-CFB], version 3, 512-byte sectors) with a
 * WordDocument stream holding the FIB and the text, and a 1Table stream holding the piece
 * table. Both streams are 4096 bytes, the mini-stream cutoff, so no mini FAT is needed.
 */
function makeDoc(paragraphs: string[]): Buffer {
  const STREAM = 4096;
  const TEXT_AT = 0x800;
  const text = Buffer.from(paragraphs.map((p) => `${p}\r`).join(''), 'latin1');

  const word = Buffer.alloc(STREAM);
  word.writeUInt16LE(0xa5ec, 0x00); // wIdent
  word.writeUInt16LE(0x00c1, 0x02); // nFib: Word 97
  word.writeUInt16LE(0x0200, 0x0a); // fWhichTblStm: the table stream is "1Table"
  word.writeUInt32LE(TEXT_AT, 0x18); // fcMin
  word.writeUInt16LE(14, 0x20); // csw
  word.writeUInt16LE(22, 0x3e); // cslw
  word.writeUInt32LE(text.length, 0x4c); // ccpText
  word.writeUInt16LE(0x5d, 0x98); // cbRgFcLcb
  word.writeUInt32LE(0, 0x1a2); // fcClx
  word.writeUInt32LE(21, 0x1a6); // lcbClx
  text.copy(word, TEXT_AT);

  const table = Buffer.alloc(STREAM);
  table.writeUInt8(2, 0); // Pcdt
  table.writeUInt32LE(16, 1); // PlcPcd: two CPs and one PCD
  table.writeUInt32LE(0, 5);
  table.writeUInt32LE(text.length, 9);
  table.writeUInt16LE(0, 13);
  table.writeUInt32LE((TEXT_AT * 2) | 0x40000000, 15); // fc of 8-bit ("compressed") text
  table.writeUInt16LE(0, 19);

  const SECTOR = 512;
  const header = Buffer.alloc(SECTOR);
  Buffer.from('d0cf11e0a1b11ae1', 'hex').copy(header, 0);
  header.writeUInt16LE(0x3e, 24);
  header.writeUInt16LE(3, 26);
  header.writeUInt16LE(0xfffe, 28);
  header.writeUInt16LE(9, 30); // 512-byte sectors
  header.writeUInt16LE(6, 32); // 64-byte mini sectors
  header.writeUInt32LE(1, 44); // one FAT sector
  header.writeUInt32LE(1, 48); // directory at sector 1
  header.writeUInt32LE(4096, 56);
  header.writeInt32LE(-2, 60); // no mini FAT
  header.writeInt32LE(-2, 68); // no DIFAT sectors
  for (let i = 0; i < 109; i++) header.writeInt32LE(i === 0 ? 0 : -1, 76 + i * 4);

  const perStream = STREAM / SECTOR;
  const fat = Buffer.alloc(SECTOR, 0xff);
  fat.writeInt32LE(-3, 0); // sector 0 is the FAT
  fat.writeInt32LE(-2, 4); // sector 1 is the directory
  for (const start of [2, 2 + perStream]) {
    for (let i = 0; i < perStream; i++) fat.writeInt32LE(i < perStream - 1 ? start + i + 1 : -2, (start + i) * 4);
  }

  const dir = Buffer.alloc(SECTOR);
  const entry = (i: number, name: string, type: number, left: number, right: number, child: number, start: number, size: number) => {
    const at = i * 128;
    dir.write(name, at, 'utf16le');
    dir.writeUInt16LE((name.length + 1) * 2, at + 64);
    dir.writeUInt8(type, at + 66);
    dir.writeUInt8(1, at + 67); // black
    dir.writeInt32LE(left, at + 68);
    dir.writeInt32LE(right, at + 72);
    dir.writeInt32LE(child, at + 76);
    dir.writeInt32LE(start, at + 116);
    dir.writeUInt32LE(size, at + 120);
  };
  entry(0, 'Root Entry', 5, -1, -1, 1, -2, 0);
  entry(1, 'WordDocument', 2, 2, -1, -1, 2, STREAM);
  entry(2, '1Table', 2, -1, -1, -1, 2 + perStream, STREAM);
  for (let i = 3; i < 4; i++) entry(i, '', 0, -1, -1, -1, 0, 0);

  return Buffer.concat([header, fat, dir, word, table]);
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
