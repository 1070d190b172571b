/**
 * Where uploaded files live. Callers see one interface whether the bytes sit on local disk
 * or in a Google Cloud Storage bucket; keys look like `datastores/<datastoreId>/<datasourceId>/<fileName>`.
 */
export interface StoredObject {
  size: number;
  contentType: string | null;
}

export interface UploadLink {
  url: string;
  method: 'PUT';
  expiresAt: Date;
  /** Headers the client must send with the PUT; the link is refused without them. */
  headers: Record<string, string>;
}

export interface UploadLinkOptions {
  contentType: string;
  maxBytes: number;
  /** 15 minutes when absent. */
  ttlMs?: number;
}

export interface ObjectStorage {
  readonly kind: 'local' | 'gcs';
  put(key: string, data: Buffer, contentType: string): Promise<void>;
  /** Throws StorageNotFoundError when absent. */
  get(key: string): Promise<Buffer>;
  stat(key: string): Promise<StoredObject | null>;
  /** No error when absent. */
  delete(key: string): Promise<void>;
  /**
   * A pre-signed PUT link for the object, valid for `ttlMs` (15 min by default), usable with just
   * the Content-Type header. Local links accept exactly one PUT of at most `maxBytes`; GCS links
   * (v4 signed URLs) accept any PUT of that type until they expire, so callers check the size of
   * what was stored.
   */
  createUploadLink(key: string, opts: UploadLinkOptions): Promise<UploadLink>;
}

export const DEFAULT_UPLOAD_LINK_TTL_MS = 15 * 60 * 1000;

export class StorageNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`No stored object at "${key}".`);
    this.name = 'StorageNotFoundError';
  }
}

/** A key that could escape the storage root or that a backend would refuse: a bug in the caller. */
export class InvalidStorageKeyError extends Error {
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`Invalid storage key (${reason}): ${JSON.stringify(key.length > 120 ? `${key.slice(0, 120)}…` : key)}`);
    this.name = 'InvalidStorageKeyError';
  }
}

// GCS caps object names at 1024 bytes of UTF-8, so measuring characters would let long
// non-ASCII names through locally and fail only in production.
const MAX_KEY_BYTES = 1024;

/**
 * Keys become file paths on local disk, so anything that could climb out of the root or that
 * a filesystem reads specially is refused; GCS gets the same rules so keys stay portable.
 */
export function assertValidKey(key: string): void {
  if (typeof key !== 'string' || key === '') throw new InvalidStorageKeyError(String(key), 'empty');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw new InvalidStorageKeyError(key, `longer than ${MAX_KEY_BYTES} bytes`);
  if (key.includes('\0')) throw new InvalidStorageKeyError(key, 'contains NUL');
  if (/[\x00-\x1f\x7f]/.test(key)) throw new InvalidStorageKeyError(key, 'contains a control character');
  if (key.startsWith('/')) throw new InvalidStorageKeyError(key, 'leading /');
  if (key.endsWith('/')) throw new InvalidStorageKeyError(key, 'trailing /');
  if (key.includes('..')) throw new InvalidStorageKeyError(key, 'contains ..');
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.') throw new InvalidStorageKeyError(key, 'empty or "." path segment');
    // A single segment longer than this is refused by every common filesystem (ENAMETOOLONG).
    if (Buffer.byteLength(segment, 'utf8') > 255) throw new InvalidStorageKeyError(key, 'a path segment is longer than 255 bytes');
  }
}

export function resolveTtlMs(ttlMs: number | undefined): number {
  const ttl = ttlMs ?? DEFAULT_UPLOAD_LINK_TTL_MS;
  if (!Number.isFinite(ttl) || ttl <= 0) throw new RangeError(`ttlMs must be a positive number (got ${ttlMs})`);
  return ttl;
}

export function assertMaxBytes(maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError(`maxBytes must be a non-negative whole number (got ${maxBytes})`);
  }
}

/** `type/subtype` in lower case, parameters dropped: `Text/Plain; charset=utf-8` -> `text/plain`. */
export function mimeEssence(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
}
