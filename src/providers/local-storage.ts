import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createWriteStream, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { AppError } from '../errors.ts';
import {
  assertMaxBytes,
  assertValidKey,
  mimeEssence,
  resolveTtlMs,
  StorageNotFoundError,
  type ObjectStorage,
  type StoredObject,
  type UploadLink,
  type UploadLinkOptions,
} from './storage.ts';

export interface LocalStorageOptions {
  /** Root folder; objects, their metadata and temp files live in sub-folders of it. */
  dir: string;
  /** Base URL of this service, for the upload links it hands out. */
  publicUrl: string;
  /** Where the generated signing key is kept when no secret is given. */
  dataDir: string;
  signingSecret?: string;
}

/** What an upload token carries; `exp` is in epoch milliseconds. */
export interface UploadTokenPayload {
  key: string;
  contentType: string;
  maxBytes: number;
  exp: number;
}

export type UploadTokenCheck =
  | { ok: true; payload: UploadTokenPayload }
  | { ok: false; reason: 'invalid' | 'expired' };

export const SIGNING_KEY_FILE = 'upload-signing.key';

const SWEEP_INTERVAL_MS = 10 * 60 * 1000;
// Temp files this old belong to a crashed process: no upload takes a day.
const STALE_TEMP_MS = 24 * 60 * 60 * 1000;

/**
 * Files on local disk. Layout under `dir`:
 *   objects/<key>   the bytes
 *   meta/<key>      JSON sidecar ({ contentType }): a separate tree so no key can collide with it
 *   tmp/            writes land here first, then move into place (same filesystem, so atomic)
 *   upload-markers/ one file per upload link in use, so a link is used at most once
 */
export class LocalStorage implements ObjectStorage {
  readonly kind = 'local' as const;
  readonly root: string;
  private readonly objectsDir: string;
  private readonly metaDir: string;
  private readonly tmpDir: string;
  private readonly markersDir: string;
  private publicUrl: string;
  private readonly keyFile: string;
  private readonly configuredSecret: string | undefined;
  private secret: Buffer | null = null;
  private lastSweep = 0;

  constructor(opts: LocalStorageOptions) {
    this.root = path.resolve(opts.dir);
    this.objectsDir = path.join(this.root, 'objects');
    this.metaDir = path.join(this.root, 'meta');
    this.tmpDir = path.join(this.root, 'tmp');
    this.markersDir = path.join(this.root, 'upload-markers');
    this.publicUrl = opts.publicUrl.replace(/\/+$/, '');
    this.keyFile = path.join(path.resolve(opts.dataDir), SIGNING_KEY_FILE);
    if (opts.signingSecret !== undefined && opts.signingSecret.length < 16) {
      throw new Error('signingSecret must be at least 16 characters long');
    }
    this.configuredSecret = opts.signingSecret;
  }

  /** When the port is chosen at listen time (PORT=0), links learn it afterwards. */
  setPublicUrl(url: string): void {
    this.publicUrl = url.replace(/\/+$/, '');
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    const objectPath = this.objectPath(key);
    const tmpData = await this.writeTemp(data);
    const tmpMeta = await this.writeTemp(JSON.stringify({ contentType }));
    try {
      // Metadata first: a reader that sees the new bytes also sees their content type.
      await moveInto(tmpMeta, this.metaPath(key), 'replace');
      await moveInto(tmpData, objectPath, 'replace');
    } finally {
      await removeQuietly(tmpData);
      await removeQuietly(tmpMeta);
    }
  }

  async get(key: string): Promise<Buffer> {
    const objectPath = this.objectPath(key);
    try {
      return await fs.readFile(objectPath);
    } catch (err) {
      if (isMissing(err)) throw new StorageNotFoundError(key);
      throw err;
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    const objectPath = this.objectPath(key);
    let size: number;
    try {
      const st = await fs.stat(objectPath);
      if (!st.isFile()) return null;
      size = st.size;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    return { size, contentType: await this.readContentType(key) };
  }

  async delete(key: string): Promise<void> {
    const objectPath = this.objectPath(key);
    const metaPath = this.metaPath(key);
    for (const file of [objectPath, metaPath]) {
      try {
        await fs.unlink(file);
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    }
    // Each datasource gets its own folder; without this, deleted ones would leave empty folders forever.
    await pruneEmptyParents(path.dirname(objectPath), this.objectsDir);
    await pruneEmptyParents(path.dirname(metaPath), this.metaDir);
  }

  async createUploadLink(key: string, opts: UploadLinkOptions): Promise<UploadLink> {
    assertValidKey(key);
    assertMaxBytes(opts.maxBytes);
    assertHeaderValue(opts.contentType);
    const exp = Date.now() + resolveTtlMs(opts.ttlMs);
    const token = this.signUploadToken({ key, contentType: opts.contentType, maxBytes: opts.maxBytes, exp });
    return {
      url: `${this.publicUrl}/uploads/${token}`,
      method: 'PUT',
      expiresAt: new Date(exp),
      headers: { 'content-type': opts.contentType },
    };
  }

  /** Exposed so tests and tools can mint tokens with the same secret (e.g. an already expired one). */
  signUploadToken(payload: UploadTokenPayload): string {
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `${body}.${this.hmac(body).toString('base64url')}`;
  }

  verifyUploadToken(token: string): UploadTokenCheck {
    const parts = typeof token === 'string' ? token.split('.') : [];
    if (parts.length !== 2 || !/^[A-Za-z0-9_-]+$/.test(parts[0]!) || !/^[A-Za-z0-9_-]+$/.test(parts[1]!)) {
      return { ok: false, reason: 'invalid' };
    }
    const [body, signature] = parts as [string, string];
    const expected = this.hmac(body);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid' };
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    if (!isTokenPayload(payload)) return { ok: false, reason: 'invalid' };
    if (payload.exp <= Date.now()) return { ok: false, reason: 'expired' };
    return { ok: true, payload };
  }

  /**
   * Stores the bytes sent to an upload link under the key it signs, never replacing an existing
   * object. The link's rules: valid signature, not expired, used once, the signed content type,
   * at most the signed size. A refused attempt does not use the link up.
   * Throws FORBIDDEN (invalid, expired or used link), BAD_USER_INPUT (wrong type, bad length,
   * interrupted), PAYLOAD_TOO_LARGE.
   */
  async receiveUpload(token: string, upload: IncomingUpload): Promise<{ size: number }> {
    await this.sweepOccasionally();
    const check = this.verifyUploadToken(token);
    if (!check.ok) throw new AppError('FORBIDDEN', check.reason === 'expired' ? 'The upload link has expired.' : 'The upload link is invalid.');
    const { key, contentType, maxBytes, exp } = check.payload;
    const objectPath = this.objectPath(key);
    if (await exists(objectPath)) throw linkUsed();

    if (mimeEssence(upload.contentType) !== mimeEssence(contentType)) {
      throw new AppError('BAD_USER_INPUT', `The Content-Type header must be ${contentType} (got ${upload.contentType ? JSON.stringify(upload.contentType) : 'none'}).`, { field: 'content-type' });
    }
    const declared = upload.contentLength;
    if (declared !== undefined) {
      const length = Number(declared);
      if (!/^\d+$/.test(declared.trim()) || !Number.isSafeInteger(length)) {
        throw new AppError('BAD_USER_INPUT', 'The Content-Length header is not valid.', { field: 'content-length' });
      }
      if (length > maxBytes) throw tooLarge(maxBytes);
    }
    if (upload.body.readableEnded) {
      // Something read the stream before storage got it: a wiring bug, not the client's doing.
      throw new Error('The upload body was already consumed before it reached storage.');
    }

    const marker = await this.claimLink(token, exp);
    if (!marker) throw linkUsed();
    let keepMarker = false;
    const tmpData = this.tempPath();
    try {
      await fs.mkdir(this.tmpDir, { recursive: true });
      const received = await receiveBody(upload.body, tmpData, maxBytes);
      if (received === 'aborted') throw new AppError('BAD_USER_INPUT', 'The upload was interrupted.');
      if (received === 'too-large') throw tooLarge(maxBytes);

      // A link (not a rename) so that a concurrent upload through another link to the same key
      // cannot be overwritten: the second one finds the file there and loses.
      const placed = await moveInto(tmpData, objectPath, 'exclusive');
      if (!placed) throw linkUsed();
      keepMarker = true;
      const tmpMeta = await this.writeTemp(JSON.stringify({ contentType }));
      try {
        await moveInto(tmpMeta, this.metaPath(key), 'replace');
      } finally {
        await removeQuietly(tmpMeta);
      }
      return { size: received.size };
    } finally {
      await removeQuietly(tmpData);
      // A failed attempt did not use the link: the client may retry it (e.g. with a smaller file).
      if (!keepMarker) await removeQuietly(marker);
    }
  }

  private objectPath(key: string): string {
    return this.within(this.objectsDir, key);
  }

  private metaPath(key: string): string {
    return this.within(this.metaDir, key);
  }

  private within(base: string, key: string): string {
    assertValidKey(key);
    const full = path.join(base, ...key.split('/'));
    // assertValidKey already forbids climbing out; this guards against a future change to it.
    if (!full.startsWith(base + path.sep)) throw new Error(`Storage key resolves outside the storage folder: ${key}`);
    return full;
  }

  private async readContentType(key: string): Promise<string | null> {
    try {
      const meta: unknown = JSON.parse(await fs.readFile(this.metaPath(key), 'utf8'));
      const contentType = (meta as { contentType?: unknown } | null)?.contentType;
      return typeof contentType === 'string' ? contentType : null;
    } catch (err) {
      if (isMissing(err) || err instanceof SyntaxError) return null;
      throw err;
    }
  }

  private tempPath(): string {
    return path.join(this.tmpDir, `${process.pid}-${randomUUID()}`);
  }

  private async writeTemp(data: Buffer | string): Promise<string> {
    await fs.mkdir(this.tmpDir, { recursive: true });
    const file = this.tempPath();
    const handle = await fs.open(file, 'wx');
    try {
      await handle.writeFile(data);
      // Without it a crash right after the rename can leave an empty file under the final name.
      await handle.datasync();
    } finally {
      await handle.close();
    }
    return file;
  }

  /** Claims a link for one upload; null when another request holds or has used it. */
  private async claimLink(token: string, exp: number): Promise<string | null> {
    await fs.mkdir(this.markersDir, { recursive: true });
    // The expiry in the name lets the sweep drop markers of dead links without reading them.
    const file = path.join(this.markersDir, `${exp}.${createHash('sha256').update(token).digest('hex')}`);
    try {
      const handle = await fs.open(file, 'wx');
      await handle.close();
      return file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return null;
      throw err;
    }
  }

  private async sweepOccasionally(): Promise<void> {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    try {
      for (const name of await readdirQuietly(this.markersDir)) {
        const exp = Number(name.split('.', 1)[0]);
        if (Number.isFinite(exp) && exp < now) await removeQuietly(path.join(this.markersDir, name));
      }
      for (const name of await readdirQuietly(this.tmpDir)) {
        const file = path.join(this.tmpDir, name);
        const st = await fs.stat(file).catch(() => null);
        if (st && now - st.mtimeMs > STALE_TEMP_MS) await removeQuietly(file);
      }
    } catch {
      // Housekeeping only: an upload must not fail because of it.
    }
  }

  private hmac(data: string): Buffer {
    return createHmac('sha256', this.signingKey()).update(data).digest();
  }

  private signingKey(): Buffer {
    if (!this.secret) {
      this.secret = this.configuredSecret !== undefined
        ? Buffer.from(this.configuredSecret, 'utf8')
        : loadOrCreateSigningKey(this.keyFile);
    }
    return this.secret;
  }
}

/** What arrives on an upload link: the declared type and length, and the bytes. */
export interface IncomingUpload {
  contentType: string | undefined;
  contentLength: string | undefined;
  body: Readable;
}

const linkUsed = () => new AppError('FORBIDDEN', 'The upload link was already used.');

const tooLarge = (maxBytes: number) => new AppError('PAYLOAD_TOO_LARGE', `The file is larger than the ${maxBytes} bytes this link accepts.`, { limit: maxBytes });

/**
 * Streams the body into `file`, counting bytes. On overflow it stops reading rather than
 * destroying the stream, so an HTTP client still receives the 413 (Node closes the connection
 * after the response because the body was not fully read).
 */
function receiveBody(req: Readable, file: string, maxBytes: number): Promise<{ size: number } | 'too-large' | 'aborted'> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(file, { flags: 'wx', flush: true });
    let size = 0;
    let settled = false;

    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onClose);
      out.off('error', onWriteError);
    };
    // The file must be closed before it is moved or removed.
    const settleAfterClose = (outcome: () => void, destroy: boolean) => {
      if (settled) return;
      settled = true;
      cleanup();
      out.once('close', outcome);
      // Errors after settling (e.g. from destroy) have nobody to report to.
      out.on('error', () => {});
      if (destroy) out.destroy();
      else out.end();
    };

    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.pause();
        settleAfterClose(() => resolve('too-large'), true);
        return;
      }
      if (!out.write(chunk)) {
        req.pause();
        out.once('drain', () => {
          if (!settled) req.resume();
        });
      }
    };
    const onEnd = () => settleAfterClose(() => resolve({ size }), false);
    const onAbort = () => settleAfterClose(() => resolve('aborted'), true);
    const onClose = () => {
      // An HTTP request knows whether all its bytes arrived even before 'end' is read.
      if (!((req as { complete?: boolean }).complete ?? req.readableEnded)) onAbort();
    };
    const onWriteError = (err: Error) => {
      req.pause();
      settleAfterClose(() => reject(err), true);
    };

    out.on('error', onWriteError);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
    req.resume();
  });
}

/**
 * Moves a temp file to its final place, creating folders. `exclusive` uses link(), which fails
 * when the target exists; returns false then. Retries when a concurrent delete pruned a folder
 * between mkdir and the move.
 */
async function moveInto(from: string, to: string, mode: 'replace' | 'exclusive'): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    await fs.mkdir(path.dirname(to), { recursive: true });
    try {
      if (mode === 'replace') await fs.rename(from, to);
      else await fs.link(from, to);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (mode === 'exclusive' && code === 'EEXIST') return false;
      if (code === 'ENOENT' && attempt < 3) continue;
      throw err;
    }
  }
}

async function pruneEmptyParents(dir: string, stopAt: string): Promise<void> {
  while (dir.startsWith(stopAt + path.sep)) {
    try {
      await fs.rmdir(dir);
    } catch {
      return;
    }
    dir = path.dirname(dir);
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    return (await fs.stat(file)).isFile();
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

async function removeQuietly(file: string): Promise<void> {
  await fs.rm(file, { force: true }).catch(() => {});
}

async function readdirQuietly(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => []);
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  // ENOTDIR/EISDIR: the key names a folder, or a path through a file: no object there either.
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}

function isTokenPayload(value: unknown): value is UploadTokenPayload {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (typeof v.key !== 'string' || typeof v.contentType !== 'string') return false;
  if (typeof v.maxBytes !== 'number' || !Number.isSafeInteger(v.maxBytes) || v.maxBytes < 0) return false;
  if (typeof v.exp !== 'number' || !Number.isFinite(v.exp)) return false;
  try {
    assertValidKey(v.key);
  } catch {
    return false;
  }
  return true;
}

function assertHeaderValue(contentType: string): void {
  if (typeof contentType !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+/.test(contentType.trim())) {
    throw new TypeError(`contentType must be a MIME type (got ${JSON.stringify(contentType)})`);
  }
  if (/[\r\n\0]/.test(contentType)) throw new TypeError('contentType must not contain line breaks');
}

/**
 * The secret survives restarts and is shared by every process on the same DATA_DIR, so links
 * minted by one API instance are accepted by another. Created with link() from a temp file so
 * two processes starting together agree on one key and nobody reads a half-written file.
 */
function loadOrCreateSigningKey(file: string): Buffer {
  const read = (): Buffer | null => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    if (!/^[0-9a-f]{64,}$/i.test(text)) throw new Error(`${file} does not hold a hex signing key; delete it to generate a new one.`);
    return Buffer.from(text, 'hex');
  };
  const existing = read();
  if (existing) return existing;
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(tmp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(tmp);
  }
  const created = read();
  if (!created) throw new Error(`Could not create ${file}`);
  return created;
}
