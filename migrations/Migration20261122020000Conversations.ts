import { Migration } from '@mikro-orm/migrations';

/** Conversations and messages, and the monthly query allowance with its counter. */
export class Migration20261122020000Conversations extends Migration {
  override up(): void {
    this.addSql(`create table "conversations" ("id" uuid not null, "organization_id" uuid not null, "agent_id" uuid null, "form_id" uuid null, "visitor_id" text not null, "channel" text not null default 'api', "created_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "conversations_agent_id_visitor_id_index" on "conversations" ("agent_id", "visitor_id")`);
    this.addSql(`alter table "conversations" add constraint "conversations_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade`);
    this.addSql(`alter table "conversations" add constraint "conversations_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade`);

    this.addSql(`create table "messages" ("id" uuid not null, "conversation_id" uuid not null, "from" text not null, "text" text not null, "sources" jsonb not null, "usage" jsonb null, "metadata" jsonb not null, "created_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "messages_conversation_id_id_index" on "messages" ("conversation_id", "id")`);
    this.addSql(`alter table "messages" add constraint "messages_conversation_id_foreign" foreign key ("conversation_id") references "conversations" ("id") on delete cascade`);
    this.addSql(`alter table "messages" add constraint "messages_from_check" check ("from" in ('human', 'agent'))`);

    this.addSql(`alter table "organizations" add "monthly_query_limit" bigint not null default 10000`);
    this.addSql(`create table "organization_usage" ("organization_id" uuid not null references "organizations" ("id") on delete cascade, "period" text not null, "queries" bigint not null default 0, primary key ("organization_id", "period"))`);
  }
}
