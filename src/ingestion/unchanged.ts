/**
 * What lets a re-sync skip a web page that did not change: the stored content hash
 * (`datasources.hash`, the SHA-256 of the extracted text the chunks were made from), what the
 * chunks were made with (embedding model, chunk settings), and the validators the server sent
 * (ETag, Last-Modified) for a conditional request that a 304 answers.
 */
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import type { Datastore } from '../datastores/datastore.entity.ts';
import { type Datasource, DatasourceType } from './datasource.entity.ts';

export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

/** What the chunks of a datastore's documents are made with now: the same text gives the same chunks and vectors only if this is the same too. */
export function chunkedWith(datastore: Pick<Datastore, 'embeddingModel' | 'embeddingDimension' | 'chunkSize' | 'chunkOverlap'>): string {
  return `${datastore.embeddingModel}|${datastore.embeddingDimension}|${datastore.chunkSize}|${datastore.chunkOverlap}`;
}

/** Whether the stored chunks are what processing `ds` with `current` settings would give, given the content's hash. */
function chunksCurrent(ds: Datasource, current: string): boolean {
  return ds.type === DatasourceType.web_page && !!ds.hash && ds.chunkCount > 0 && ds.chunkedWith === current;
}

/** The stored chunks came from content with this hash, made as they would be now: no need to embed again. */
export function keepsChunks(ds: Datasource, hash: string, current: string): boolean {
  return chunksCurrent(ds, current) && ds.hash === hash; // not a secret: a hash of public page text
}

/**
 * If-None-Match / If-Modified-Since from the validators stored with the chunks, when a 304 would
 * let the chunks stand; none otherwise (settings changed, nothing stored, or the server sent none).
 */
export function conditionalHeaders(ds: Datasource, current: string): Record<string, string> {
  if (!chunksCurrent(ds, current)) return {};
  return { ...(ds.etag ? { 'if-none-match': ds.etag } : {}), ...(ds.lastModified ? { 'if-modified-since': ds.lastModified } : {}) };
}

/** Beside the chunks, inside storeChunks' transaction: the validators of the fetch they came from and what they were made with. */
export async function recordSource(em: Em, datasourceId: string, validators: Validators, current: string): Promise<void> {
  await rawQuery(em, 'update datasources set etag = $2, last_modified = $3, chunked_with = $4 where id = $1', [datasourceId, validators.etag, validators.lastModified, current]);
}
