import { LRUCache } from 'lru-cache';
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { COMMON_WORD_CHUNKS, commonWordsSql } from './common-words.ts';

/** What the search statement is shaped by, read from the database rather than from each query. */
export interface ChunkStatistics {
  /** Lexemes that propose no text candidates (common-words.ts). */
  commonWords: string[];
  /** Chunks per vector dimension, as the datasources count them (each dimension has an HNSW index of its own). */
  indexed: ReadonlyMap<number, number>;
}

/** Before the first read succeeds: every word proposes candidates, and no index size is known. */
const NONE: ChunkStatistics = { commonWords: [], indexed: new Map() };

/** How long statistics are used before they are read again (ANALYZE changes the common words; ingestion the counts). */
const REFRESH_MS = 60_000;

/**
 * One statement: the common words, and the chunks of each dimension. The counts are the
 * datasources' own (`chunk_count`, written when a datasource is synched): a read of the
 * datasources table, not a count of the chunks.
 */
export function chunkStatisticsSql(minChunks = COMMON_WORD_CHUNKS): { sql: string; params: unknown[] } {
  const words = commonWordsSql(minChunks);
  return {
    sql: `select (${words.sql}) as words,
      (select coalesce(json_object_agg(t.dimension, t.chunks), '{}')
         from (select d.embedding_dimension as dimension, sum(s.chunk_count) as chunks
                 from datasources s join datastores d on d.id = s.datastore_id
                group by d.embedding_dimension) t) as indexed`,
    params: words.params,
  };
}

/** The row chunkStatisticsSql returns. */
export interface ChunkStatisticsRow {
  words: string[];
  /** Chunks by dimension (json_object_agg: the keys are text). */
  indexed: Record<string, string | number>;
}

export function chunkStatisticsOf(row: ChunkStatisticsRow): ChunkStatistics {
  return { commonWords: row.words, indexed: new Map(Object.entries(row.indexed).map(([dimension, chunks]) => [Number(dimension), Number(chunks)])) };
}

/**
 * The chunk statistics of this database, read at most once a minute: a stale value is used while
 * the next is read, and queries that find it expired together share one read (lru-cache's fetch).
 */
export class ChunkStats {
  private readonly cache: LRUCache<'stats', ChunkStatistics, Em>;

  constructor(minChunks = COMMON_WORD_CHUNKS, refreshMs = REFRESH_MS) {
    this.cache = new LRUCache<'stats', ChunkStatistics, Em>({
      max: 1,
      ttl: refreshMs,
      allowStale: true,
      fetchMethod: async (_key, _stale, { context: em }) => {
        const { sql, params } = chunkStatisticsSql(minChunks);
        try {
          // On the caller's connection (in its transaction, if any): the embedded database has one
          // connection, which a transaction holds until it ends.
          const [row] = await rawQuery<ChunkStatisticsRow>(em, sql, params);
          return row ? chunkStatisticsOf(row) : NONE;
        } catch {
          // Statistics are an optimization: without them the search runs as it would on a new database (until the next read).
          return NONE;
        }
      },
    });
  }

  async get(em: Em): Promise<ChunkStatistics> {
    return (await this.cache.fetch('stats', { context: em })) ?? NONE;
  }
}
