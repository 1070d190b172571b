import type { FormatCallback } from 'html-to-text';
import { LoaderError } from './errors.ts';

export function tooMuchText(max: number): LoaderError {
  return new LoaderError(
    'TOO_LARGE',
    `The document contains too much text (more than ${max.toLocaleString('en-US')} characters).`,
  );
}

/**
 * Counts characters as a parser produces them, so a huge spreadsheet or JSON stops early
 * instead of first building a string many times the limit.
 */
export class TextBudget {
  private used = 0;

  constructor(readonly max: number) {}

  take(text: string): string {
    this.used += text.length;
    if (this.used > this.max) throw tooMuchText(this.max);
    return text;
  }
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * Plain-text bytes to a string. UTF-8 is the default; a BOM selects UTF-16; bytes that are
 * not valid UTF-8 are read as Windows-1252, which is what spreadsheet programs on Windows
 * still write for "CSV" and is the only other encoding we meet in practice.
 */
export function decodeText(data: Uint8Array, what: string): string {
  let text: string;
  if (data[0] === 0xff && data[1] === 0xfe) {
    text = new TextDecoder('utf-16le').decode(data.subarray(2));
  } else if (data[0] === 0xfe && data[1] === 0xff) {
    text = new TextDecoder('utf-16be').decode(data.subarray(2));
  } else {
    const body = UTF8_BOM.every((b, i) => data[i] === b) ? data.subarray(3) : data;
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
    } catch {
      text = new TextDecoder('windows-1252').decode(body);
    }
  }
  // No text format we accept contains NUL; its presence means a binary file with a text name.
  if (text.includes('\u0000')) {
    throw new LoaderError('CORRUPT', `The ${what} could not be read: it contains binary data, not text.`);
  }
  return text.replace(/\r\n?/g, '\n');
}

/** Cell text on one line: the row renderers rely on one record per line. */
export function oneLine(value: string): string {
  return value.replace(/\s*\n\s*/g, ' ').trim();
}

export function trimTrailingEmpty(row: string[]): string[] {
  let end = row.length;
  while (end > 0 && row[end - 1] === '') end--;
  return end === row.length ? row : row.slice(0, end);
}

const NUMBER_LIKE = /^[-+]?(\d[\d,.\s]*)?\d%?$/;

/**
 * A first row is taken as a header when every cell is non-empty, distinct and not a number:
 * a data row almost always has an empty or numeric cell somewhere.
 */
export function looksLikeHeader(row: readonly string[]): boolean {
  if (row.length < 2) return false;
  const seen = new Set<string>();
  for (const cell of row) {
    if (cell === '' || NUMBER_LIKE.test(cell) || seen.has(cell)) return false;
    seen.add(cell);
  }
  return true;
}

/**
 * Rows of cells to lines of text. With a header, each row becomes "name: Ann; city: Paris":
 * chunking cuts tables at arbitrary lines, and a chunk from the middle of a table has lost
 * its header row, so a bare "Ann\tParis" would embed (and read, for the LLM) as noise. Repeating
 * column names costs tokens but keeps every line self-describing. "; " separates pairs because
 * values often contain commas ("Smith, John"). Empty cells are left out. Rows without a
 * recognisable header are tab-separated, the least lossy plain form.
 */
export function renderRows(rows: readonly (readonly string[])[], budget: TextBudget): string[] {
  const lines: string[] = [];
  const first = rows[0];
  if (!first) return lines;
  const header = rows.length > 1 && looksLikeHeader(first) ? first : null;
  if (!header) {
    for (const row of rows) {
      const line = row.join('\t').trimEnd();
      if (line) lines.push(budget.take(line));
    }
    return lines;
  }
  for (const row of rows.slice(1)) {
    const pairs: string[] = [];
    row.forEach((value, i) => {
      if (value !== '') pairs.push(`${header[i] ?? `column ${i + 1}`}: ${value}`);
    });
    if (pairs.length) lines.push(budget.take(pairs.join('; ')));
  }
  return lines;
}

/**
 * An html-to-text formatter writing h1-h6 as Markdown headings ("## Pricing"): the chunker starts
 * every chunk with the headings above it (ingestion/chunker.ts), so a document's structure
 * reaches each chunk's text and citation. Web pages and Word documents use it.
 */
export const markdownHeading: FormatCallback = (elem, walk, builder) => {
  builder.openBlock({ leadingLineBreaks: 2 });
  builder.addLiteral(`${'#'.repeat(Number(elem.name?.slice(1)) || 1)} `);
  walk(elem.children, builder);
  builder.closeBlock({ trailingLineBreaks: 2 });
};
