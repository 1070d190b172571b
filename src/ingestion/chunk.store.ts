import { createHash } from 'node:crypto';
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { vectorFromInts, vectorIntsLiteral, vectorIntsScale } from '../db/vector-ints.ts';
import { newId } from '../ids.ts';
import type { Piece } from './chunker.ts';
import { guardSql, type StatusWrite } from './datasource.service.ts';

export interface ChunkRow extends Piece {
  embedding: number[];
  metadata: Record<string, unknown>;
}

export interface ChunkTarget {
  datasourceId: string;
  datastoreId: string;
  customId: string | null;
  dimension: number;
  /**
   * The datastore's embedding model the vectors were made by: when given, nothing is stored once
   * the datastore has switched to another (datastores/reembed.job.ts), and storeChunks returns false.
   */
  embeddingModel?: string;
}

/** What becomes of the datasource row once its chunks are stored, and how that is announced. */
export interface SynchedRow {
  tokenCount: number;
  hash: string;
  /** A new name (a web page's title), or null to keep it. */
  name: string | null;
  /** `synched` as DatasourceService allows it: its guard (statuses, run) and its notification. */
  status: StatusWrite;
}

/**
 * The datastore still has the model the vectors were made by (parameter `$p`, null = not checked). Its row is
 * share-locked: a switch of model waits for this write, and a write after a switch sees it.
 */
function sameModel(p: number): string {
  return `($${p}::text is null or exists (select 1 from datastores m where m.id = datasources.datastore_id and m.embedding_model = $${p}::text for share of m))`;
}

/** Rows per INSERT statement: large enough to amortise round trips, small enough for one message. */
const INSERT_BATCH = 500;

const COLUMNS = 'id, datasource_id, datastore_id, custom_id, position, page, text, content_hash, embedding, dimension, metadata';
/** One statement per batch: arrays unnested server-side, whatever the batch size. Parameters $1-$12. */
const INSERT_SELECT = `select id, $1::uuid, $2::uuid, $3::text, position, page, text, content_hash, ${vectorFromInts('embedding::int4[]', '$12')}, $4::smallint, metadata
  from unnest($5::uuid[], $6::int[], $7::int[], $8::text[], $9::text[], $10::text[], $11::jsonb[])
    as t(id, position, page, text, content_hash, embedding, metadata)`;

function insertParams(target: ChunkTarget, batch: ChunkRow[]): unknown[] {
  return [
    target.datasourceId,
    target.datastoreId,
    target.customId,
    target.dimension,
    batch.map(() => newId()),
    batch.map((r) => r.position),
    batch.map((r) => r.page),
    batch.map((r) => r.text),
    batch.map((r) => createHash('sha256').update(r.text).digest('hex')),
    batch.map((r) => vectorIntsLiteral(r.embedding)),
    batch.map((r) => JSON.stringify(r.metadata)),
    vectorIntsScale(target.dimension),
  ];
}

/** The guard (statuses, run) of the synchedParams that start at $<first>. */
function synchedGuard(first: number): string {
  return guardSql(first + 8, first + 9);
}

/**
 * The row's update and its notification: the new values from $<first> on (10 parameters, the
 * last two the guard's); only the row that `where` picks is written.
 */
function synchedSql(first: number, where: string): string {
  const p = (k: number) => `$${first + k}`;
  return `synched as (
      update datasources
         set status = ${p(0)}, chunk_count = ${p(1)}, token_count = ${p(2)}, hash = ${p(3)}, last_synch = ${p(4)}, updated_at = ${p(4)},
             error_message = null, name = coalesce(${p(5)}, name)
       where ${where} returning id)
    select pg_notify(${p(6)}, ${p(7)}) from synched`;
}

function synchedParams(rows: ChunkRow[], done: SynchedRow): unknown[] {
  const { status, from, since, notify } = done.status;
  return [status, rows.length, done.tokenCount, done.hash, new Date(), done.name, notify.channel, notify.payload, from, since];
}

/**
 * Replaces every chunk of a datasource and marks it `synched`, atomically: a retry or a crash can
 * never leave duplicates or half a document, and the notification goes out on commit. A
 * datasource no longer being processed (asked for again meanwhile: its new job will store it) is
 * left as it is, chunks included.
 *
 * Up to INSERT_BATCH chunks this is one statement (the row locked and checked once, old chunks deleted, new ones inserted, the row
 * updated and announced), which is a transaction by itself; a longer document takes a transaction
 * of one statement per batch. Returns false, having written nothing, when the datasource is gone
 * or no longer being processed.
 */
export async function storeChunks(em: Em, target: ChunkTarget, rows: ChunkRow[], done: SynchedRow): Promise<boolean> {
  if (rows.length <= INSERT_BATCH) {
    const result = await rawQuery(
      em,
      `with target as (select id from datasources where id = $1 and ${synchedGuard(13)} and ${sameModel(23)} for no key update),
            gone as (delete from chunks where datasource_id = (select id from target)),
            added as (insert into chunks (${COLUMNS}) ${INSERT_SELECT} where exists (select 1 from target)),
            ${synchedSql(13, 'id = (select id from target)')}`,
      [...insertParams(target, rows), ...synchedParams(rows, done), target.embeddingModel ?? null],
    );
    return result.length > 0;
  }
  return em.transactional(async (tx) => {
    const [row] = await rawQuery(
      tx,
      `select id from datasources where id = $1 and ${guardSql(2, 3)} and ${sameModel(4)} for no key update`,
      [target.datasourceId, done.status.from, done.status.since, target.embeddingModel ?? null],
    );
    if (!row) return false; // deleted, asked for again, or taken over by a newer run while we worked
    await replaceChunks(tx, target, rows);
    await rawQuery(tx, `with ${synchedSql(2, `id = $1 and ${synchedGuard(2)}`)}`, [target.datasourceId, ...synchedParams(rows, done)]);
    return true;
  });
}

/** Replaces every chunk of a datasource; inside storeChunks' transaction. */
async function replaceChunks(em: Em, target: ChunkTarget, rows: ChunkRow[]): Promise<void> {
  await rawQuery(em, 'delete from chunks where datasource_id = $1', [target.datasourceId]);
  for (let start = 0; start < rows.length; start += INSERT_BATCH) {
    await rawQuery(em, `insert into chunks (${COLUMNS}) ${INSERT_SELECT}`, insertParams(target, rows.slice(start, start + INSERT_BATCH)));
  }
}
