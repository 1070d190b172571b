/**
 * The deterministic extractor (no language model): a visitor's text becomes a candidate value
 * for one field by its type, format and enum. It only reads; ajv decides whether the candidate
 * is valid, so what it cannot make sense of is returned as text and refused with ajv's reason.
 */
import { choices, type FormField } from './form-schema.ts';
import { escapeRegExp } from '../regexp.ts';

/** Answers that leave an optional field out (a yes/no or enum value wins over these). */
const SKIP_WORDS = new Set(['skip', 'no', '-', 'none', 'n/a', 'na', 'pass', 'nothing', 'no thanks', 'skip it', 'next']);
const YES = new Set(['yes', 'y', 'true', 'yeah', 'yep', 'yup', 'sure', 'ok', 'okay', 'of course', 'correct', 'right', 'absolutely', 'oui', 'si', 'sí', 'ja', '1']);
const NO = new Set(['no', 'n', 'false', 'nope', 'nah', 'not really', 'never', 'non', 'nein', '0']);
/** Openings that answer nothing: a first message like this only starts the form. */
const GREETING =
  /^(?:hi|hello|hey|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|day)|start|begin|let'?s (?:start|go|begin)|ok(?:ay)?|hallo|bonjour|salut|hola|ciao)(?:\s+(?:there|everyone|all|team))?[\s!.,?]*$/i;

const clean = (text: string) => text.trim().replace(/^["'“‘]+|["'”’]+$/g, '').trim();
const normal = (text: string) => clean(text).toLowerCase().replace(/[\s.!]+$/g, '').replace(/\s+/g, ' ');

export function isSkip(text: string): boolean {
  return SKIP_WORDS.has(normal(text));
}

export function isGreeting(text: string): boolean {
  return GREETING.test(text.trim());
}

/** The candidate value of `text` for `field`, or undefined when the text holds nothing to try. */
export function extractValue(field: FormField, text: string): unknown {
  const raw = clean(text);
  if (!raw) return undefined;
  switch (field.kind) {
    case 'string':
      return readText(field, raw);
    case 'email':
      return findEmail(raw) ?? raw;
    case 'uri':
      return findUri(raw) ?? raw;
    case 'date':
      return parseDate(raw) ?? raw;
    case 'number':
    case 'integer':
      return parseNumber(raw) ?? raw;
    case 'boolean':
      return parseBoolean(raw) ?? raw;
    case 'enum':
      return matchChoice(field, raw) ?? raw;
    case 'array':
      return parseList(field, raw);
    case 'object':
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        return raw;
      }
  }
}

/** A value the model gave as text for a typed field ("42" for an integer) gets the same reading. */
export function coerce(field: FormField, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (field.kind === 'string') return value;
  return extractValue(field, value) ?? value;
}

const GREETING_PREFIX = /^(?:hi|hello|hey|hiya|howdy|good (?:morning|afternoon|evening|day)|bonjour|hola|hallo|ciao)(?:\s+there)?\s*[,!.:;-]+\s*|^(?:hi|hello|hey)\s+(?=i\b|i'm\b|my\b|it'?s\b|this\b)/i;

/**
 * Free text, without the words around the answer a person would add: a greeting in front, "my
 * <label> is", and for names "I am", "I'm", "this is", "call me" ("Hi, I'm Ada" -> "Ada").
 */
function readText(field: FormField, text: string): string {
  let rest = text.replace(GREETING_PREFIX, '');
  const label = field.label.toLowerCase().replace(/^your\s+/, '');
  const named = new RegExp(`^(?:my|our|the)\\s+${escapeRegExp(label)}\\s+(?:is|=|:)\\s*`, 'i');
  if (named.test(rest)) rest = rest.replace(named, '');
  else if (/\bname\b/.test(label)) rest = rest.replace(/^(?:i am|i'm|im|this is|it'?s|it is|call me|they call me)\s+/i, '');
  if (/\bname\b/.test(label)) rest = rest.replace(/[.!]+$/, '');
  return clean(rest) || text;
}

export function findEmail(text: string): string | null {
  const m = /[^\s<>()[\]@,;:"']+@[^\s<>()[\]@,;:"']+\.[^\s<>()[\]@,;:"'.]+/.exec(text);
  return m ? m[0].replace(/[.,;:!?)]+$/, '') : null;
}

export function findUri(text: string): string | null {
  const m = /\bhttps?:\/\/[^\s<>"']+/i.exec(text);
  if (m) return m[0].replace(/[.,;:!?)]+$/, '');
  // A bare domain ("example.com/contact") gets https://.
  const bare = /^(?:www\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.[a-z]{2,}(?:[/?#]\S*)?$/i.exec(text.trim().replace(/[.,;:!?]+$/, ''));
  return bare ? `https://${bare[0]}` : null;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

function isoDate(y: number, m: number, d: number): string | null {
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return null;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

const monthOf = (word: string) => {
  const i = MONTHS.indexOf(word.slice(0, 3).toLowerCase());
  return i === -1 ? null : i + 1;
};

/**
 * YYYY-MM-DD (also with / or .), DD/MM/YYYY (also - or .; MM/DD/YYYY when the first number
 * cannot be a day of a month but the second can), "22 November 2026", "November 22, 2026".
 * Returns YYYY-MM-DD, or null when there is no real date in the text.
 */
export function parseDate(text: string): string | null {
  let m = /\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b/.exec(text);
  if (m) return isoDate(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})\b/.exec(text);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    const y = Number(m[3]);
    // Day first, as most of the world writes it; month first only when that is the sole reading.
    return a <= 12 && b > 12 ? isoDate(y, a, b) : isoDate(y, b, a);
  }
  m = /\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]{3,})\.?,?\s+(\d{4})\b/i.exec(text);
  if (m && monthOf(m[2]!)) return isoDate(Number(m[3]), monthOf(m[2]!)!, Number(m[1]));
  m = /\b([a-z]{3,})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b/i.exec(text);
  if (m && monthOf(m[1]!)) return isoDate(Number(m[3]), monthOf(m[1]!)!, Number(m[2]));
  return null;
}

/** The first number in the text: "42", "-3.5", "3,5", "1,250,000", "about 30 years". */
export function parseNumber(text: string): number | null {
  const m = /[-+]?\d{1,3}(?:[ ,']\d{3})+(?:\.\d+)?(?!\d)|[-+]?\d+(?:[.,]\d+)?/.exec(text);
  if (!m) return null;
  let s = m[0];
  if (/^[-+]?\d{1,3}(?:[ ,']\d{3})+(?:\.\d+)?$/.test(s)) s = s.replace(/[ ,']/g, '');
  else s = s.replace(',', '.');
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

export function parseBoolean(text: string): boolean | null {
  const n = normal(text);
  if (YES.has(n)) return true;
  if (NO.has(n)) return false;
  const first = n.split(/[\s,;!]+/)[0] ?? '';
  if (YES.has(first)) return true;
  if (NO.has(first)) return false;
  return null;
}

/** A listed value: exact (any case), else the only one the text starts, else the only one named in it. */
export function matchChoice(field: FormField, text: string): unknown {
  const values = Array.isArray(field.schema.enum) ? (field.schema.enum as unknown[]) : [];
  const labels = choices(field).map((c) => c.toLowerCase());
  const n = normal(text);
  const exact = labels.indexOf(n);
  if (exact !== -1) return values[exact];
  const prefixed = labels.flatMap((l, i) => (n && l.startsWith(n) ? [i] : []));
  if (prefixed.length === 1) return values[prefixed[0]!];
  const named = labels.flatMap((l, i) => (l && new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(l)}($|[^\\p{L}\\p{N}])`, 'u').test(n) ? [i] : []));
  if (named.length === 1) return values[named[0]!];
  return undefined;
}

function parseList(field: FormField, text: string): unknown[] {
  const items = (field.schema.items ?? {}) as Record<string, unknown>;
  const parts = text.split(/\s*(?:,|;|\band\b|\n)\s*/i).map((s) => s.trim()).filter(Boolean);
  const itemField: FormField = { name: field.name, label: field.label, required: true, schema: items, kind: Array.isArray(items.enum) ? 'enum' : items.type === 'number' || items.type === 'integer' ? (items.type as 'number') : 'string' };
  return parts.map((part) => extractValue(itemField, part) ?? part);
}
