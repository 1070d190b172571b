import { Migration } from '@mikro-orm/migrations';

/**
 * Scheduled re-sync of web content. Datasources and datastores carry their schedule (`none` for
 * the rows that exist); a web page keeps the validators its server sent (ETag, Last-Modified) for
 * conditional requests, and what its chunks were made with (`chunked_with`: the embedding model
 * and chunk settings) so unchanged text is skipped only when the chunks would come out the same.
 * Rows from before have no `chunked_with`: their first re-sync embeds them once more.
 */
export class Migration20261127000100ResyncSchedule extends Migration {
  override up(): void {
    this.addSql(`alter table "datasources" add column "resync_schedule" text not null default 'none', add column "etag" text null, add column "last_modified" text null, add column "chunked_with" text null`);
    this.addSql(`alter table "datastores" add column "resync_schedule" text not null default 'none', add column "last_synch" timestamptz null`);
  }

  override down(): void {
    this.addSql(`alter table "datasources" drop column "resync_schedule", drop column "etag", drop column "last_modified", drop column "chunked_with"`);
    this.addSql(`alter table "datastores" drop column "resync_schedule", drop column "last_synch"`);
  }
}
