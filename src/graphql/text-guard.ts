/**
 * Text PostgreSQL cannot store: a NUL character, or half of a UTF-16 surrogate pair (which has
 * no UTF-8 form). Such a string in any argument is refused as BAD_USER_INPUT naming its field,
 * before any resolver (or subscription) runs, so it never reaches the database as a 500.
 */
import type { FieldCheck } from './field-guard.ts';
import { badInput } from '../errors.ts';

/** Where `value` holds unstorable text, its path (`metadata.note`, `urls[2]`); null when clean. */
function findBadText(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return isStorableText(value) ? null : path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findBadText(value[i], `${path}[${i}]`);
      if (bad !== null) return bad;
    }
    return null;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    for (const [key, item] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key;
      if (!isStorableText(key)) return here;
      const bad = findBadText(item, here);
      if (bad !== null) return bad;
    }
  }
  return null;
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units: no `u` flag). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}

/**
 * Throws BAD_USER_INPUT naming the first field with unstorable text. The field is named as the
 * other validation errors name it: within the `input` object (`query`, `metadata.note`), or the
 * argument itself (`id`).
 */
export function assertStorableText(args: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(args)) {
    const within = name === 'input' && value !== null && typeof value === 'object' && !Array.isArray(value);
    const bad = findBadText(value, within ? '' : name);
    if (bad !== null) {
      const field = bad || name;
      throw badInput(`${field} contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored.`, { field });
    }
  }
}

/** Every field that takes arguments (root operations, and fields such as `messages(after:)`). */
export const storableTextCheck: FieldCheck = (field) => (field.args.length ? assertStorableText : null);
