import { Migration } from '@mikro-orm/migrations';

/**
 * The conversations inbox lists an organization's conversations newest first, a page at a time:
 * without this index every page read and sorted all conversations of every organization. Read
 * backwards, the index gives a page (and the cursor's `created_at, id` bound) directly.
 */
export class Migration20261129000100ConversationsByOrganization extends Migration {
  override up(): void {
    this.addSql(`create index "conversations_organization_id_created_at_id_index" on "conversations" ("organization_id", "created_at", "id")`);
  }

  override down(): void {
    this.addSql(`drop index "conversations_organization_id_created_at_id_index"`);
  }
}
