import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LEN = 32;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, KEY_LEN, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return timingSafeEqual(actual, expected);
}

/** A stored hash to compare against when the user does not exist, so timing does not tell. */
export const DUMMY_PASSWORD_HASH =
  'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

export type TokenKind = 'ak' | 'st';

/** A high-entropy token: `ak_…` for API keys, `st_…` for session tokens. */
export function newToken(kind: TokenKind): string {
  return `${kind}_${randomBytes(24).toString('base64url')}`;
}

export function tokenKind(token: string): TokenKind | null {
  return token.startsWith('ak_') ? 'ak' : token.startsWith('st_') ? 'st' : null;
}

/** Tokens are random, so a fast hash is enough: what a stolen table holds cannot be used. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function randomPassword(): string {
  return randomBytes(18).toString('base64url');
}
