import { Migration } from '@mikro-orm/migrations';

/**
 * Datasources and their chunks. Chunk embeddings are an untyped `vector` column: each
 * datastore records its own dimension, and each dimension gets its own partial HNSW index
 * (512 here, for the embedded model; others are created at start-up when configured).
 */
export class Migration20261122010000Ingestion extends Migration {
  override up(): void {
    this.addSql(`create table "datasources" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "datastore_id" uuid not null, "type" text not null, "name" text not null, "status" text not null default 'unsynched', "group_id" uuid null, "config" jsonb not null, "custom_id" text null, "metadata" jsonb not null, "mime_type" text null, "file_name" text null, "storage_key" text null, "content" text null, "size" bigint null, "hash" text null, "chunk_count" int not null default 0, "token_count" int not null default 0, "error_message" text null, "last_synch" timestamptz null, primary key ("id"))`);
    this.addSql(`create index "datasources_group_id_index" on "datasources" ("group_id")`);
    this.addSql(`create index "datasources_datastore_id_id_index" on "datasources" ("datastore_id", "id")`);
    this.addSql(`create index "datasources_organization_id_index" on "datasources" ("organization_id")`);
    this.addSql(`alter table "datasources" add constraint "datasources_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade`);
    this.addSql(`alter table "datasources" add constraint "datasources_datastore_id_foreign" foreign key ("datastore_id") references "datastores" ("id") on delete cascade`);
    this.addSql(`alter table "datasources" add constraint "datasources_type_check" check ("type" in ('file', 'web_page', 'web_site', 'text'))`);
    this.addSql(`alter table "datasources" add constraint "datasources_status_check" check ("status" in ('unsynched', 'pending', 'running', 'synched', 'error', 'usage_limit_reached'))`);

    this.addSql(`create table "chunks" ("id" uuid not null, "datasource_id" uuid not null, "datastore_id" uuid not null, "custom_id" text null, "position" int not null, "page" int null, "text" text not null, "content_hash" text not null, "embedding" vector null, "dimension" smallint not null, "metadata" jsonb not null, "tsv" tsvector generated always as (to_tsvector('english', "text")) stored, primary key ("id"))`);
    this.addSql(`create index "chunks_datastore_id_index" on "chunks" ("datastore_id", "custom_id")`);
    this.addSql(`create index "chunks_datasource_id_position_index" on "chunks" ("datasource_id", "position")`);
    this.addSql(`create index "chunks_tsv_index" on "chunks" using gin ("tsv")`);
    this.addSql(`create index "chunks_embedding_512_hnsw" on "chunks" using hnsw (("embedding"::vector(512)) vector_cosine_ops) where "dimension" = 512`);
    this.addSql(`alter table "chunks" add constraint "chunks_datasource_id_foreign" foreign key ("datasource_id") references "datasources" ("id") on delete cascade`);

    this.addSql(`alter table "organizations" add "stored_token_limit" bigint not null default 10000000, add "crawl_page_limit" int not null default 25`);
    this.addSql(`alter table "datastores" add "chunk_size" int not null default 1000, add "chunk_overlap" int not null default 200`);
  }
}
