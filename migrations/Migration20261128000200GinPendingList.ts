import { Migration } from '@mikro-orm/migrations';

/**
 * The full-text index of chunks keeps at most 256 kB of not-yet-merged entries (PostgreSQL's
 * default is 4 MB). New chunks go to that pending list first and every full-text search reads
 * all of it: after a bulk load of 50,000 chunks it held 489 pages (3,409 chunks) and the
 * datastore query took 98 ms instead of 42 (bench:query). A smaller list is merged into the index
 * more often while chunks are written, in smaller batches (docs/benchmarks.md).
 */
export class Migration20261128000200GinPendingList extends Migration {
  override up(): void {
    this.addSql(`alter index "chunks_tsv_index" set (gin_pending_list_limit = 256)`);
  }

  override down(): void {
    this.addSql(`alter index "chunks_tsv_index" reset (gin_pending_list_limit)`);
  }
}
