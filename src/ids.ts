import { randomBytes } from 'node:crypto';

/**
 * UUIDv7: 48 bits of milliseconds then 74 random bits. Ids sort by creation time (keyset
 * pagination, newest first) and stay unguessable, so an id can serve as an access token.
 */
export function newId(now = Date.now()): string {
  const b = randomBytes(16);
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are uuids; anything else can never match a row, so callers answer NOT_FOUND early. */
export function isId(value: string): boolean {
  return UUID.test(value);
}
