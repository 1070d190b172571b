import { createHash } from 'node:crypto';
import pgvector from 'pgvector';
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { newId } from '../ids.ts';
import type { Piece } from './chunker.ts';

export interface ChunkRow extends Piece {
  embedding: number[];
  metadata: Record<string, unknown>;
}

/** Rows per INSERT statement: large enough to amortise round trips, small enough for one message. */
const INSERT_BATCH = 500;

/**
 * Replaces every chunk of a datasource. Call inside a transaction: a retry or a crash can then
 * never leave duplicates or half a document.
 */
export async function replaceChunks(
  em: Em,
  target: { datasourceId: string; datastoreId: string; customId: string | null; dimension: number },
  rows: ChunkRow[],
): Promise<void> {
  await rawQuery(em, 'delete from chunks where datasource_id = $1', [target.datasourceId]);
  for (let start = 0; start < rows.length; start += INSERT_BATCH) {
    const batch = rows.slice(start, start + INSERT_BATCH);
    // One statement per batch: arrays unnested server-side, whatever the batch size.
    await rawQuery(
      em,
      `insert into chunks (id, datasource_id, datastore_id, custom_id, position, page, text, content_hash, embedding, dimension, metadata)
       select id, $1::uuid, $2::uuid, $3, position, page, text, content_hash, embedding::vector, $4, metadata
       from unnest($5::uuid[], $6::int[], $7::int[], $8::text[], $9::text[], $10::text[], $11::jsonb[])
         as t(id, position, page, text, content_hash, embedding, metadata)`,
      [
        target.datasourceId,
        target.datastoreId,
        target.customId,
        target.dimension,
        batch.map(() => newId()),
        batch.map((r) => r.position),
        batch.map((r) => r.page),
        batch.map((r) => r.text),
        batch.map((r) => createHash('sha256').update(r.text).digest('hex')),
        batch.map((r) => pgvector.toSql(r.embedding)),
        batch.map((r) => JSON.stringify(r.metadata)),
      ],
    );
  }
}
