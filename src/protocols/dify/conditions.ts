/**
 * Dify's `metadata_condition` as a pure predicate over a record's metadata. A key the record
 * lacks (absent, null) matches only `empty`: `is not` and `not in` do not match it either, as the
 * issue's contract says, so a filter never selects documents for lacking a field.
 */
import { badInput } from '../../errors.ts';
import { isRecord } from '../http.ts';

const OPERATORS = ['is', 'is not', 'in', 'not in', 'contains', 'not contains', 'start with', 'end with', 'empty', 'not empty', '=', '≠', '>', '<', '≥', '≤'] as const;
type Operator = (typeof OPERATORS)[number];

export interface Condition {
  names: string[];
  operator: Operator;
  value: unknown;
}

export interface MetadataCondition {
  any: boolean;
  conditions: Condition[];
}

/** Throws BAD_USER_INPUT naming the field. Null when there is no condition to apply. */
export function parseMetadataCondition(raw: unknown): MetadataCondition | null {
  if (raw == null) return null;
  if (!isRecord(raw)) throw badInput('metadata_condition must be an object.', { field: 'metadata_condition' });
  const op = raw.logical_operator ?? 'and';
  if (op !== 'and' && op !== 'or') throw badInput('metadata_condition.logical_operator must be "and" or "or".', { field: 'metadata_condition.logical_operator' });
  const list = raw.conditions ?? [];
  if (!Array.isArray(list)) throw badInput('metadata_condition.conditions must be an array.', { field: 'metadata_condition.conditions' });
  if (list.length > 100) throw badInput('metadata_condition.conditions takes at most 100 conditions.', { field: 'metadata_condition.conditions' });
  const conditions = list.map((c, i): Condition => {
    const field = `metadata_condition.conditions[${i}]`;
    if (!isRecord(c)) throw badInput(`${field} must be an object.`, { field });
    // A string, as documented; a list of names (an older form of Dify's request) matches on any of them.
    const names = typeof c.name === 'string' ? [c.name] : Array.isArray(c.name) && c.name.length && c.name.every((n) => typeof n === 'string') ? (c.name as string[]) : null;
    if (!names) throw badInput(`${field}.name must be a string.`, { field: `${field}.name` });
    const operator = c.comparison_operator;
    if (typeof operator !== 'string' || !(OPERATORS as readonly string[]).includes(operator)) {
      throw badInput(`${field}.comparison_operator must be one of: ${OPERATORS.join(', ')}.`, { field: `${field}.comparison_operator` });
    }
    const needsValue = operator !== 'empty' && operator !== 'not empty';
    if (needsValue && (c.value === undefined || c.value === null)) throw badInput(`${field}.value is required for "${operator}".`, { field: `${field}.value` });
    if (needsValue && !isScalar(c.value) && !(Array.isArray(c.value) && c.value.every(isScalar))) {
      throw badInput(`${field}.value must be a string, a number, or a list of them.`, { field: `${field}.value` });
    }
    return { names, operator: operator as Operator, value: c.value };
  });
  return conditions.length ? { any: op === 'or', conditions } : null;
}

export function matches(condition: MetadataCondition, metadata: Record<string, unknown>): boolean {
  const test = (c: Condition) => c.names.some((name) => compare(c.operator, Object.hasOwn(metadata, name) ? metadata[name] : undefined, c.value));
  return condition.any ? condition.conditions.some(test) : condition.conditions.every(test);
}

/** The keys a condition reads. */
export function namesOf(condition: MetadataCondition): Set<string> {
  return new Set(condition.conditions.flatMap((c) => c.names));
}

function compare(operator: Operator, actual: unknown, expected: unknown): boolean {
  const missing = actual === undefined || actual === null;
  const empty = missing || actual === '' || (Array.isArray(actual) && actual.length === 0);
  if (operator === 'empty') return empty;
  if (operator === 'not empty') return !empty;
  if (missing) return false;
  const values = Array.isArray(actual) ? actual.map(String) : [String(actual)];
  const wanted = Array.isArray(expected) ? expected.map(String) : String(expected);
  const list = Array.isArray(wanted) ? wanted : wanted.split(',').map((s) => s.trim());
  const one = Array.isArray(wanted) ? wanted.join(',') : wanted;
  switch (operator) {
    case 'is':
    case '=':
      return numeric(actual, expected, (a, b) => a === b) ?? values.includes(one);
    case 'is not':
    case '≠':
      return !(numeric(actual, expected, (a, b) => a === b) ?? values.includes(one));
    case 'in':
      return values.some((v) => list.includes(v));
    case 'not in':
      return !values.some((v) => list.includes(v));
    case 'contains':
      return Array.isArray(actual) ? values.includes(one) : values[0]!.includes(one);
    case 'not contains':
      return !(Array.isArray(actual) ? values.includes(one) : values[0]!.includes(one));
    case 'start with':
      return values.some((v) => v.startsWith(one));
    case 'end with':
      return values.some((v) => v.endsWith(one));
    case '>':
      return numeric(actual, expected, (a, b) => a > b) ?? false;
    case '<':
      return numeric(actual, expected, (a, b) => a < b) ?? false;
    case '≥':
      return numeric(actual, expected, (a, b) => a >= b) ?? false;
    case '≤':
      return numeric(actual, expected, (a, b) => a <= b) ?? false;
  }
}

/** Both sides as numbers when both are numeric (a page 3 is 3 and "3"); else null. */
function numeric(actual: unknown, expected: unknown, test: (a: number, b: number) => boolean): boolean | null {
  if (Array.isArray(actual) || Array.isArray(expected)) return null;
  if (typeof actual !== 'number' && typeof expected !== 'number') return null;
  const a = Number(actual);
  const b = Number(expected);
  return Number.isFinite(a) && Number.isFinite(b) && String(actual).trim() !== '' && String(expected).trim() !== '' ? test(a, b) : null;
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}
