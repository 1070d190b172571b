/**
 * Sample files of every type the loaders read, built in code: a hand-written PDF, OOXML
 * packages zipped with JSZip or written by exceljs, a Word 97 binary (.doc) laid out from the
 * [MS-CFB] and [MS-DOC] specifications (no office suite exists on the test machines), and the
 * text formats. Shared by the loader tests and the end-to-end ingestion tests.
 */
import ExcelJS from 'exceljs';
import JSZip from 'jszip';

/** The MIME type of each sample kind. */
export const MIME = {
  csv: 'text/csv',
  txt: 'text/plain',
  md: 'text/markdown',
  pdf: 'application/pdf',
  json: 'application/json',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  doc: 'application/msword',
} as const;

/** A PDF with one Helvetica text object per page; xref offsets are computed, so it is valid. */
export function makePdf(pages: string[][], title?: string): Buffer {
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

/** Paragraphs of text; `{ heading: n, text }` is a paragraph in Word's built-in "Heading n" style. */
export async function makeDocx(paragraphs: (string | { heading: number; text: string })[], title?: string): Promise<Buffer> {
  const zip = new JSZip();
  const levels = [...new Set(paragraphs.flatMap((p) => (typeof p === 'string' ? [] : [p.heading])))];
  zip.file(
    '[Content_Types].xml',
    contentTypes({
      '/word/document.xml': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml',
      '/docProps/core.xml': 'application/vnd.openxmlformats-package.core-properties+xml',
      ...(levels.length ? { '/word/styles.xml': 'application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml' } : {}),
    }),
  );
  zip.file(
    '_rels/.rels',
    rels([
      ['rId1', `${REL}/officeDocument`, 'word/document.xml'],
      ['rId2', 'http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties', 'docProps/core.xml'],
    ]),
  );
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  if (levels.length) {
    zip.file('word/_rels/document.xml.rels', rels([['rId1', `${REL}/styles`, 'styles.xml']]));
    const styles = levels.map((n) => `<w:style w:type="paragraph" w:styleId="Heading${n}"><w:name w:val="heading ${n}"/></w:style>`).join('');
    zip.file('word/styles.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles ${W}>${styles}</w:styles>`);
  }
  const body = paragraphs
    .map((p) =>
      typeof p === 'string'
        ? `<w:p><w:r><w:t xml:space="preserve">${p}</w:t></w:r></w:p>`
        : `<w:p><w:pPr><w:pStyle w:val="Heading${p.heading}"/></w:pPr><w:r><w:t xml:space="preserve">${p.text}</w:t></w:r></w:p>`,
    )
    .join('');
  zip.file('word/document.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${W}><w:body>${body}</w:body></w:document>`);
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
export async function makePptx(slides: { text: string[][]; notes?: string[][] }[], title?: string): Promise<Buffer> {
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

export async function makeXlsx(): Promise<Buffer> {
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
export function makeDoc(paragraphs: string[]): Buffer {
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


/** CSV with a header row, a quoted comma and a quoted newline. */
export function makeCsv(rows: string[][] = [['product', 'price', 'notes'], ['Widget, large', '12.50', 'ships\nin a crate'], ['Gadget', '3.10', 'plain']]): Buffer {
  const cell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  return Buffer.from(`${rows.map((r) => r.map(cell).join(',')).join('\n')}\n`);
}

export function makeJson(value: unknown = { catalog: { name: 'Spare parts', items: [{ sku: 'A-100', label: 'Hex bolt' }, { sku: 'B-200', label: 'Wing nut' }] } }): Buffer {
  return Buffer.from(JSON.stringify(value, null, 2));
}

export function makeMarkdown(title = 'Setup guide', body = 'Install the agent, then run it with `--verbose`.'): Buffer {
  return Buffer.from(`# ${title}\n\n${body}\n\n- step one\n- step two\n`);
}

export function makeText(text = 'Plain text sample: the warehouse opens at seven in the morning.'): Buffer {
  return Buffer.from(text);
}

/**
 * A .docx-shaped ZIP whose one entry inflates to `megabytes` of spaces while the archive stays
 * small (a decompression bomb): refused before parsing.
 */
export async function makeZipBomb(megabytes = 200, entry = 'word/document.xml'): Promise<Buffer> {
  const zip = new JSZip().file(entry, Buffer.alloc(megabytes * 1024 * 1024, 0x20));
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 9 } });
}
