import { Migration } from '@mikro-orm/migrations';

/**
 * Cheaper chunk inserts with the indexes in place (issue 19, docs/benchmarks.md#ingestion-npm-run-benchingest):
 *  - Chunk rows are kept whole up to a page (toast_tuple_target = 8160) instead of from 2 kB: a
 *    row of a 384- or 512-dimension vector, its text and its tsv is about 3 kB, and its vector went
 *    to the TOAST table, a second heap insert and a second index insert for every chunk (and a
 *    TOAST fetch for every vector a query scores). Rows written from now on; existing rows stay
 *    as they are until rewritten.
 *  - Each dimension's HNSW index is rebuilt with m = 12 and ef_construction = 40 (pgvector's
 *    defaults are 16 and 64): fewer distance computations per inserted chunk, recall@10 at
 *    50,000 chunks measured by bench:query. The rebuild takes as long as building the index anew
 *    (once, at the upgrade, while chunk writes wait).
 * vector-index.ts creates the index of a new dimension with the same parameters.
 */
export class Migration20261129000400ChunkInsertCost extends Migration {
  override up(): void {
    this.addSql(`alter table "chunks" set (toast_tuple_target = 8160)`);
    this.addSql(rebuildHnswSql('with (m = 12, ef_construction = 40)'));
  }

  override down(): void {
    this.addSql(`alter table "chunks" reset (toast_tuple_target)`);
    this.addSql(rebuildHnswSql(''));
  }
}

/** Every chunks_embedding_<dimension>_hnsw index dropped and created again `with`. */
export function rebuildHnswSql(withClause: string): string {
  return `do $$
declare
  dim text;
begin
  for dim in
    select substring(c.relname from '^chunks_embedding_([0-9]+)_hnsw$')
      from pg_index i join pg_class c on c.oid = i.indexrelid
     where i.indrelid = 'chunks'::regclass and c.relname ~ '^chunks_embedding_[0-9]+_hnsw$'
  loop
    execute format('drop index %I', 'chunks_embedding_' || dim || '_hnsw');
    execute format('create index %I on chunks using hnsw ((embedding::vector(%s)) vector_cosine_ops) ${withClause} where dimension = %s',
      'chunks_embedding_' || dim || '_hnsw', dim, dim);
  end loop;
end $$`;
}
