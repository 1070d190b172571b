import Papa from 'papaparse';
import { LoaderError } from './errors.ts';
import { decodeText, oneLine, renderRows, TextBudget, trimTrailingEmpty } from './common.ts';
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

/**
 * JSON as one "path: value" line per leaf ("orders[2].customer.city: Paris"). Pretty-printed
 * JSON spends much of its tokens on braces and indentation, and a chunk cut from the middle of
 * it no longer says which object its values belong to; a full path on every line keeps each
 * line meaningful on its own, for embedding and for the LLM. Several top-level values (JSON
 * Lines) are numbered like an array.
 *
 * A small streaming reader instead of JSON.parse: JSON.parse builds the whole object graph
 * (several times the file's size) in one call that cannot be interrupted, so a worker running
 * out of heap inside it takes the whole process down instead of being stopped; reading
 * token by token needs memory only for the output, which the budget caps. It also keeps
 * numbers as written (64-bit ids stay exact).
 */
export function parseJson(data: Buffer, opts: ParseOptions): LoadedDocument {
  const budget = new TextBudget(opts.maxTextChars);
  const source = decodeText(data, 'JSON file');
  let flat: { lines: string[]; roots: number };
  try {
    flat = flattenJson(source, budget);
  } catch (error) {
    if (error instanceof SyntaxError) {
      throw new LoaderError('CORRUPT', 'The JSON file could not be read: it is not valid JSON.', { cause: error });
    }
    throw error;
  }
  return { text: flat.lines.join('\n'), metadata: { format: flat.roots > 1 ? 'jsonl' : 'json', values: flat.lines.length } };
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

function keyPath(parent: string, key: string): string {
  if (!IDENTIFIER.test(key)) return `${parent}[${JSON.stringify(key)}]`;
  return parent ? `${parent}.${key}` : key;
}

export function flattenJson(s: string, budget: TextBudget): { lines: string[]; roots: number } {
  const entries: [path: string, text: string][] = [];
  const stack: { array: boolean; path: string; count: number }[] = [];
  const n = s.length;
  let i = 0;
  let roots = 0;

  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${i}`);
  };
  const skipWhitespace = () => {
    for (let c = s.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = s.charCodeAt(++i));
  };
  const expect = (char: string) => {
    if (s[i] !== char) fail(`expected "${char}"`);
    i++;
    skipWhitespace();
  };
  const readString = (): string => {
    if (s[i] !== '"') fail('expected a string');
    let out = '';
    let start = ++i;
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        out += s.slice(start, i++);
        return out;
      }
      if (c === 0x5c) {
        out += s.slice(start, i);
        const e = s[i + 1] ?? '';
        if (e === 'u') {
          const hex = s.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad unicode escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else {
          const escaped = ESCAPES[e];
          if (escaped === undefined) fail('bad escape');
          out += escaped;
          i += 2;
        }
        start = i;
        continue;
      }
      if (c < 0x20) fail('control character in string');
      i++;
    }
  };
  const readScalar = (): string => {
    const c = s[i];
    if (c === '"') return readString().trim();
    for (const literal of ['true', 'false', 'null']) {
      if (s.startsWith(literal, i)) {
        i += literal.length;
        return literal;
      }
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(s);
    if (!number) fail(i >= n ? 'unexpected end' : `unexpected "${c}"`);
    i += number![0].length;
    return number![0];
  };

  for (;;) {
    skipWhitespace();
    const frame = stack[stack.length - 1];
    let path: string;
    if (!frame) {
      if (i >= n) break;
      if (roots === 1) {
        // A second top-level value: the first one becomes [0] after the fact.
        for (const entry of entries) entry[0] = `[0]${entry[0] === '' || entry[0].startsWith('[') ? '' : '.'}${entry[0]}`;
      }
      path = roots === 0 ? '' : `[${roots}]`;
      roots++;
    } else if (s[i] === (frame.array ? ']' : '}')) {
      i++;
      stack.pop();
      continue;
    } else {
      if (frame.count > 0) expect(',');
      if (frame.array) {
        path = `${frame.path}[${frame.count}]`;
      } else {
        const key = readString();
        skipWhitespace();
        expect(':');
        path = keyPath(frame.path, key);
      }
      frame.count++;
    }
    if (s[i] === '{' || s[i] === '[') {
      stack.push({ array: s[i] === '[', path, count: 0 });
      i++;
      continue;
    }
    const text = readScalar();
    if (text !== '') {
      budget.take(text);
      budget.take(path);
      entries.push([path, text]);
    }
  }
  return { lines: entries.map(([path, text]) => (path ? `${path}: ${text}` : text)), roots };
}
