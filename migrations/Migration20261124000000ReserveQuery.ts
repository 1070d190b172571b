import { Migration } from '@mikro-orm/migrations';

/**
 * The monthly allowance's reservation as a function: PL/pgSQL keeps its statement's plan per
 * connection, where the same statement sent as text is planned again for every answer (about
 * half of its cost). Returns the queries used with this one, or null when the allowance is
 * used up (or the organization has none).
 */
export class Migration20261124000000ReserveQuery extends Migration {
  override up(): void {
    this.addSql(`create or replace function reserve_query(org uuid, per text) returns bigint language plpgsql as $body$
declare
  used bigint;
begin
  insert into organization_usage as u (organization_id, period, queries)
    select o.id, per, 1 from organizations o where o.id = org and o.monthly_query_limit > 0
  on conflict (organization_id, period) do update set queries = u.queries + 1
    where u.queries < (select monthly_query_limit from organizations where id = org)
  returning queries into used;
  return used;
end
$body$`);
  }

  override down(): void {
    this.addSql(`drop function if exists reserve_query(uuid, text)`);
  }
}
