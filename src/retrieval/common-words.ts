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
