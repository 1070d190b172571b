import { randomBytes, randomInt } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

/**
 * UUIDv7: 48 bits of milliseconds, a 12-bit sequence, then 62 random bits. Ids sort by creation
 * time (keyset pagination, newest first), also within one millisecond of one process, and stay
 * unguessable.
 */
export function newId(now = Date.now()): string {
  if (now <= lastMs) {
    now = lastMs;
    if (++sequence > 0xfff) {
      now = ++lastMs;
      sequence = 0;
    }
  } else {
    lastMs = now;
    sequence = randomInt(0, 0x800); // room to count up within the millisecond
  }
  const b = randomBytes(16);
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (sequence >> 8);
  b[7] = sequence & 0xff;
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are uuids; anything else can never match a row, so callers answer NOT_FOUND early. */
export function isId(value: string): boolean {
  return UUID.test(value);
}
