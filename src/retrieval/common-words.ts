import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';

/**
 * A word in more chunks than this (across the chunks table, by ANALYZE's statistics) does not
 * propose candidates in the text half of a search. GIN has no ordered scan: a bitmap search reads
 * the whole posting list of every word it uses, so a word found in most chunks (a product's name in
 * its own manual, "order" in a shop's FAQ) made each query's text half cost in proportion to the
 * table (10,000 chunks that all share the query's words: ~5 ms a query; 250,000: 25 times more),
 * while such a word tells the chunks apart no better than the vector half does. It still counts in
 * every candidate's score (Fragment.score's share of the query's words).
 */
export const COMMON_WORD_CHUNKS = 5000;

/** How long a list is used before it is read again (ANALYZE changes it; autovacuum runs it as chunks are written). */
const REFRESH_MS = 60_000;

/**
 * The lexemes in more than `minChunks` chunks: ANALYZE's most common elements of `chunks.tsv` and
 * their frequencies, times its row estimate. Empty until the table has been analyzed (and for
 * tables of fewer than `minChunks` chunks).
 */
export function commonWordsSql(minChunks = COMMON_WORD_CHUNKS): { sql: string; params: unknown[] } {
  return {
    sql: `select coalesce(array_agg(e.word order by e.word), '{}') as words
      from pg_stats s
      cross join lateral unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) as e(word, freq)
      where s.schemaname = current_schema() and s.tablename = 'chunks' and s.attname = 'tsv'
        and e.word is not null
        and e.freq * greatest((select reltuples from pg_class where oid = 'chunks'::regclass), 0) > $1`,
    params: [minChunks],
  };
}

/** The common words of this database, read at most once a minute (a stale list is used while the next is read). */
export class CommonWords {
  private words: string[] = [];
  private readAt = -Infinity;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly minChunks = COMMON_WORD_CHUNKS,
    private readonly refreshMs = REFRESH_MS,
  ) {}

  async get(em: Em): Promise<string[]> {
    if (performance.now() - this.readAt > this.refreshMs && !this.reading) {
      const { sql, params } = commonWordsSql(this.minChunks);
      // On the caller's connection (in its transaction, if any): the embedded database has one
      // connection, which a transaction holds until it ends.
      this.reading = rawQuery<{ words: string[] }>(em, sql, params)
        .then(([row]) => {
          this.words = row?.words ?? [];
          this.readAt = performance.now();
        })
        // The list is an optimization: without it every word proposes candidates, as before.
        .catch(() => {
          this.readAt = performance.now();
        })
        .finally(() => {
          this.reading = null;
        });
      // The first read is waited for; later ones refresh behind the queries that use the last list.
      if (this.readAt === -Infinity) await this.reading;
    }
    return this.words;
  }
}
