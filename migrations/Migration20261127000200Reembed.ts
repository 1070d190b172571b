import { Migration } from '@mikro-orm/migrations';

/**
 * Changing a datastore's embedding model: the pending model and its progress on the datastore,
 * and each chunk's vector by the pending model beside the one in use (swapped in at the end).
 */
export class Migration20261127000200Reembed extends Migration {
  override up(): void {
    this.addSql(
      `alter table "datastores" add column "pending_embedding_model" text null, add column "pending_embedding_dimension" int null, add column "reembed_progress" double precision null, add column "reembed_error" text null`,
    );
    this.addSql(`alter table "chunks" add column "embedding_next" vector null`);
  }

  override down(): void {
    this.addSql(`alter table "chunks" drop column "embedding_next"`);
    this.addSql(`alter table "datastores" drop column "pending_embedding_model", drop column "pending_embedding_dimension", drop column "reembed_progress", drop column "reembed_error"`);
  }
}
