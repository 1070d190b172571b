import { Migration } from '@mikro-orm/migrations';

/** Organizations, access, datastores and agents. The vector extension is created first, by hand. */
export class Migration20261122000000Foundation extends Migration {
  override up(): void {
    this.addSql(`create extension if not exists vector`);
    this.addSql(`create table "organizations" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" text not null, primary key ("id"))`);
    this.addSql(`create table "datastores" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" text not null, "description" text not null default '', "visibility" text not null default 'private', "embedding_model" text not null, "embedding_dimension" int not null, primary key ("id"))`);
    this.addSql(`create index "datastores_organization_id_id_index" on "datastores" ("organization_id", "id")`);
    this.addSql(`alter table "datastores" add constraint "datastores_visibility_check" check ("visibility" in ('public', 'private'))`);
    this.addSql(`create table "agents" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "handle" text null, "name" text not null, "description" text not null default '', "model_name" text not null default 'model_3_5_turbo', "temperature" double precision not null default 0, "visibility" text not null default 'private', "system_prompt" text not null default '', "user_prompt" text not null default '', "prompt_type" text null, "prompt_template" text null, primary key ("id"))`);
    this.addSql(`alter table "agents" add constraint "agents_handle_unique" unique ("handle")`);
    this.addSql(`create index "agents_organization_id_id_index" on "agents" ("organization_id", "id")`);
    this.addSql(`alter table "agents" add constraint "agents_model_name_check" check ("model_name" in ('model_3_5_turbo', 'model_3_5_turbo_16k', 'model_4', 'model_4_32k'))`);
    this.addSql(`alter table "agents" add constraint "agents_visibility_check" check ("visibility" in ('public', 'private'))`);
    this.addSql(`alter table "agents" add constraint "agents_prompt_type_check" check ("prompt_type" in ('raw', 'customer_support'))`);
    this.addSql(`create table "agent_datastores" ("agent_id" uuid not null, "datastore_id" uuid not null, primary key ("agent_id", "datastore_id"))`);
    this.addSql(`create table "users" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "email" text not null, "password_hash" text not null, primary key ("id"))`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email")`);
    this.addSql(`create table "sessions" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "user_id" uuid not null, "organization_id" uuid not null, "token_hash" text not null, "expires_at" timestamptz not null, "revoked_at" timestamptz null, primary key ("id"))`);
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash")`);
    this.addSql(`create index "sessions_expires_at_index" on "sessions" ("expires_at")`);
    this.addSql(`create table "memberships" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "user_id" uuid not null, "organization_id" uuid not null, "role" text not null default 'member', primary key ("id"))`);
    this.addSql(`alter table "memberships" add constraint "memberships_user_id_organization_id_unique" unique ("user_id", "organization_id")`);
    this.addSql(`alter table "memberships" add constraint "memberships_role_check" check ("role" in ('owner', 'admin', 'member'))`);
    this.addSql(`create table "api_keys" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "created_by_id" uuid null, "name" text not null, "prefix" text not null, "key_hash" text not null, "last_used_at" timestamptz null, "revoked_at" timestamptz null, primary key ("id"))`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash")`);
    this.addSql(`alter table "datastores" add constraint "datastores_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade`);
    this.addSql(`alter table "agents" add constraint "agents_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade`);
    this.addSql(`alter table "agent_datastores" add constraint "agent_datastores_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade`);
    this.addSql(`alter table "agent_datastores" add constraint "agent_datastores_datastore_id_foreign" foreign key ("datastore_id") references "datastores" ("id") on update cascade on delete cascade`);
    this.addSql(`alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "sessions" add constraint "sessions_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade`);
    this.addSql(`alter table "memberships" add constraint "memberships_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade`);
    this.addSql(`alter table "memberships" add constraint "memberships_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_created_by_id_foreign" foreign key ("created_by_id") references "users" ("id") on delete set null`);
    this.addSql(`create index "api_keys_organization_id_index" on "api_keys" ("organization_id")`);
    this.addSql(`create index "agent_datastores_datastore_id_index" on "agent_datastores" ("datastore_id")`);
    this.addSql(`create index "memberships_organization_id_index" on "memberships" ("organization_id")`);
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id")`);
  }
}
