import { Migration } from '@mikro-orm/migrations';

/** Conversational forms and their submissions; a form's conversations go with it. */
export class Migration20261122030000Forms extends Migration {
  override up(): void {
    this.addSql(`create table "forms" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" text not null, "schema" json not null, "intro" text not null default '', "webhook_url" text null, "webhook_secret" text not null, "published" boolean not null default false, primary key ("id"))`);
    this.addSql(`create index "forms_organization_id_id_index" on "forms" ("organization_id", "id")`);
    this.addSql(`alter table "forms" add constraint "forms_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade`);

    this.addSql(`create table "form_submissions" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "form_id" uuid not null, "conversation_id" uuid not null, "values" jsonb not null, "skipped" jsonb not null, "current_field" text null, "status" text not null default 'in_progress', "turn" int not null default 0, "completed_at" timestamptz null, "webhook_attempts" int not null default 0, "webhook_delivered_at" timestamptz null, "webhook_error" text null, primary key ("id"))`);
    this.addSql(`create unique index "form_submissions_conversation_id_unique" on "form_submissions" ("conversation_id")`);
    this.addSql(`create index "form_submissions_form_id_id_index" on "form_submissions" ("form_id", "id")`);
    this.addSql(`alter table "form_submissions" add constraint "form_submissions_form_id_foreign" foreign key ("form_id") references "forms" ("id") on delete cascade`);
    this.addSql(`alter table "form_submissions" add constraint "form_submissions_conversation_id_foreign" foreign key ("conversation_id") references "conversations" ("id") on delete cascade`);
    this.addSql(`alter table "form_submissions" add constraint "form_submissions_status_check" check ("status" in ('in_progress', 'completed'))`);

    this.addSql(`create index "conversations_form_id_index" on "conversations" ("form_id")`);
    this.addSql(`alter table "conversations" add constraint "conversations_form_id_foreign" foreign key ("form_id") references "forms" ("id") on delete cascade`);
  }
}
