import type { Bucket } from '@google-cloud/storage';
import {
  assertMaxBytes,
  assertValidKey,
  resolveTtlMs,
  StorageNotFoundError,
  type ObjectStorage,
  type StoredObject,
  type UploadLink,
  type UploadLinkOptions,
} from './storage.ts';

export interface GcsStorageOptions {
  bucket: string;
  /** A non-Google endpoint (a test server); null = Google's. */
  apiEndpoint: string | null;
  projectId: string | null;
}

// v4 signed URLs cannot live longer than this.
const MAX_SIGNED_URL_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Objects in a Google Cloud Storage bucket. Credentials are found the way Google's client finds
 * them (GOOGLE_APPLICATION_CREDENTIALS, workload identity…); passing keys in code is deprecated
 * by google-auth-library. Upload links are v4 signed URLs computed locally when the credentials
 * hold a private key, so creating one needs no network.
 */
export class GcsStorage implements ObjectStorage {
  readonly kind = 'gcs' as const;
  readonly bucketName: string;
  private bucketPromise: Promise<Bucket> | null = null;

  constructor(private readonly opts: GcsStorageOptions) {
    this.bucketName = opts.bucket;
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    const file = await this.file(key);
    await file.save(data, { contentType, resumable: false });
  }

  async get(key: string): Promise<Buffer> {
    const file = await this.file(key);
    try {
      const [data] = await file.download();
      return data;
    } catch (err) {
      if (isNotFound(err)) throw new StorageNotFoundError(key);
      throw err;
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    const file = await this.file(key);
    try {
      const [metadata] = await file.getMetadata();
      // The JSON API sends sizes as strings (int64).
      return { size: Number(metadata.size ?? 0), contentType: metadata.contentType ?? null };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const file = await this.file(key);
    await file.delete({ ignoreNotFound: true });
  }

  async createUploadLink(key: string, opts: UploadLinkOptions): Promise<UploadLink> {
    assertMaxBytes(opts.maxBytes);
    const ttl = resolveTtlMs(opts.ttlMs);
    if (ttl > MAX_SIGNED_URL_TTL_MS) throw new RangeError('GCS signed URLs cannot be valid for more than 7 days');
    const file = await this.file(key);
    const expires = Date.now() + ttl;
    // Only Content-Type is signed: clients get the link alone (interface.md: {id, link}) and send
    // just the declared type with their PUT, so a signed extension header (x-goog-content-length-range,
    // x-goog-if-generation-match) would make GCS refuse every such upload. The size cap is
    // enforced when the upload is processed instead (the object is deleted, 413).
    const [url] = await file.getSignedUrl({
      version: 'v4',
      action: 'write',
      expires,
      contentType: opts.contentType,
    });
    return {
      url,
      method: 'PUT',
      // The signer counts in whole seconds from the current second.
      expiresAt: new Date(Math.floor(expires / 1000) * 1000),
      headers: { 'content-type': opts.contentType },
    };
  }

  private async file(key: string) {
    assertValidKey(key);
    return (await this.bucket()).file(key);
  }

  /** Loaded on first use: the client library costs ~150 ms of startup that local mode never needs. */
  private bucket(): Promise<Bucket> {
    this.bucketPromise ??= import('@google-cloud/storage').then(({ Storage }) => {
      const storage = new Storage({
        ...(this.opts.apiEndpoint ? { apiEndpoint: this.opts.apiEndpoint } : {}),
        ...(this.opts.projectId ? { projectId: this.opts.projectId } : {}),
      });
      return storage.bucket(this.opts.bucket);
    });
    return this.bucketPromise;
  }
}

function isNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 404;
}
