import Papa from 'papaparse';
import { LoaderError } from './errors.ts';
import { decodeText, oneLine, renderRows, TextBudget } from './common.ts';
import type { LoadedDocument, ParseOptions } from './types.ts';

export function parsePlainText(data: Buffer, opts: ParseOptions): LoadedDocument {
  const text = new TextBudget(opts.maxTextChars).take(decodeText(data, 'text file'));
  return { text, metadata: { lines: countLines(text) } };
}

export function parseMarkdown(data: Buffer, opts: ParseOptions): LoadedDocument {
  const text = new TextBudget(opts.maxTextChars).take(decodeText(data, 'Markdown file'));
  // Markdown stays as written: headings and lists are structure the chunker and LLM can use.
  const heading = /^#[ \t]+(.+?)[ \t#]*$/m.exec(text);
  return { text, ...(heading ? { title: heading[1]!.trim() } : {}), metadata: { lines: countLines(text) } };
}

function countLines(text: string): number {
  let lines = text.length > 0 ? 1 : 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
}

/** CSV rows rendered by `renderRows` (see there why "column: value" lines). */
export function parseCsv(data: Buffer, opts: ParseOptions): LoadedDocument {
  const budget = new TextBudget(opts.maxTextChars);
  const source = decodeText(data, 'CSV file');
  // The delimiter is detected (",", ";", tab, "|"): European spreadsheets export with ";".
  const parsed = Papa.parse<string[]>(source, { skipEmptyLines: 'greedy' });
  const rows = parsed.data.map((row) => trimTrailingEmpty(row.map((cell) => oneLine(String(cell ?? '')))));
  const lines = renderRows(rows, budget);
  return {
    text: lines.join('\n'),
    metadata: { rows: rows.length, columns: rows.reduce((n, r) => Math.max(n, r.length), 0), delimiter: parsed.meta.delimiter },
  };
}

export function trimTrailingEmpty(row: string[]): string[] {
  let end = row.length;
  while (end > 0 && row[end - 1] === '') end--;
  return end === row.length ? row : row.slice(0, end);
}

/**
 * JSON as one "path: value" line per leaf ("orders[2].customer.city: Paris"). Pretty-printed
 * JSON spends much of its tokens on braces and indentation, and a chunk cut from the middle of
 * it no longer says which object its values belong to; a full path on every line keeps each
 * line meaningful on its own, for embedding and for the LLM. JSON Lines (one value per line)
 * is accepted too, rendered as if it were an array.
 */
export function parseJson(data: Buffer, opts: ParseOptions): LoadedDocument {
  const budget = new TextBudget(opts.maxTextChars);
  const source = decodeText(data, 'JSON file');
  let value: unknown;
  let format = 'json';
  try {
    value = JSON.parse(source);
  } catch (error) {
    const lines = source.split('\n').filter((line) => line.trim() !== '');
    try {
      if (lines.length < 2) throw error;
      value = lines.map((line) => JSON.parse(line) as unknown);
      format = 'jsonl';
    } catch {
      throw new LoaderError('CORRUPT', 'The JSON file could not be read: it is not valid JSON.', { cause: error });
    }
  }
  const lines = flatten(value, budget);
  return { text: lines.join('\n'), metadata: { format, values: lines.length } };
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

// Iterative: a deeply nested document must not overflow the stack of the worker.
function flatten(root: unknown, budget: TextBudget): string[] {
  const lines: string[] = [];
  const stack: { path: string; value: unknown }[] = [{ path: '', value: root }];
  while (stack.length) {
    const { path, value } = stack.pop()!;
    if (value !== null && typeof value === 'object') {
      const children = Array.isArray(value)
        ? value.map((v, i) => ({ path: `${path}[${i}]`, value: v as unknown }))
        : Object.entries(value).map(([k, v]) => ({
            path: IDENTIFIER.test(k) ? (path ? `${path}.${k}` : k) : `${path}[${JSON.stringify(k)}]`,
            value: v as unknown,
          }));
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
      continue;
    }
    const text = typeof value === 'string' ? value.trim() : String(value);
    if (text === '') continue;
    lines.push(budget.take(path ? `${path}: ${text}` : text));
  }
  return lines;
}
