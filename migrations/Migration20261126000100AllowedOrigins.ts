import { Migration } from '@mikro-orm/migrations';

/** The origins whose web pages may call an agent or a datastore (src/origins.ts); empty = any, as before. */
export class Migration20261126000100AllowedOrigins extends Migration {
  override up(): void {
    this.addSql(`alter table "agents" add column "allowed_origins" text[] not null default '{}'`);
    this.addSql(`alter table "datastores" add column "allowed_origins" text[] not null default '{}'`);
  }

  override down(): void {
    this.addSql(`alter table "agents" drop column "allowed_origins"`);
    this.addSql(`alter table "datastores" drop column "allowed_origins"`);
  }
}
