import { Migration } from '@mikro-orm/migrations';

/**
 * Scoped API keys: lists of agents and datastores a key is limited to, read-only keys, expiry.
 * Existing keys get null lists, read_only false and no expiry: the full access they had.
 */
export class Migration20261126000200ScopedApiKeys extends Migration {
  override up(): void {
    this.addSql(`alter table "api_keys" add column "agent_ids" jsonb null, add column "datastore_ids" jsonb null, add column "read_only" boolean not null default false, add column "expires_at" timestamptz null`);
  }

  override down(): void {
    this.addSql(`alter table "api_keys" drop column "agent_ids", drop column "datastore_ids", drop column "read_only", drop column "expires_at"`);
  }
}
