import { Migration } from '@mikro-orm/migrations';

/**
 * The limits' statements for many questions at once (src/limits/grouped.ts): questions that
 * arrive while a count is on its way to the database are counted together in the next one, so a
 * burst of 1,000 anonymous questions costs a few statements on the one row of their address and
 * of their organization instead of 1,000 each, queued on those rows' locks.
 *
 * - `rate_hits`: `rate_hit` with keys that may repeat (the same address asking several
 *   questions). Each occurrence is one hit and gets the count it would have had one call at a
 *   time, in the order given: the window's count before the statement plus its place among the
 *   key's occurrences. Rows are written in key order, so statements of several processes cannot
 *   deadlock.
 * - `reserve_queries`: `reserve_query` for n queries at once; grants as many as the
 *   organization's allowance has left (0 to n) and returns how many.
 */
export class Migration20261129006600GroupedLimits extends Migration {
  override up(): void {
    this.addSql(`create or replace function rate_hits(keys text[], windows integer[]) returns table (i integer, hits integer, retry_after integer) language plpgsql as $body$
#variable_conflict use_column
begin
  return query
  with given as (
    select t.k, t.w, t.i::integer as i, (row_number() over (partition by t.k order by t.i))::integer as nth
    from unnest(keys, windows) with ordinality as t(k, w, i)
  ), per_key as (
    select k, max(w) as w, count(*)::integer as n from given group by k
  ), counted as (
    insert into rate_counters as c (key, hits, expires_at)
      select p.k, p.n, now() + make_interval(secs => p.w) from per_key p order by p.k
    on conflict on constraint rate_counters_pkey do update set
      hits = case when c.expires_at > now() then c.hits + excluded.hits else excluded.hits end,
      expires_at = case when c.expires_at > now() then c.expires_at else excluded.expires_at end
    returning c.key, c.hits, c.expires_at
  )
  select g.i, c.hits - p.n + g.nth, greatest(1, ceil(extract(epoch from c.expires_at - now())))::integer
  from given g join per_key p on p.k = g.k join counted c on c.key = g.k
  order by g.i;
end
$body$`);

    this.addSql(`create or replace function reserve_queries(org uuid, per text, n integer) returns integer language plpgsql as $body$
declare
  cap bigint;
  used bigint;
  granted integer;
begin
  select monthly_query_limit into cap from organizations where id = org;
  if cap is null or cap <= 0 or n <= 0 then return 0; end if;
  insert into organization_usage (organization_id, period, queries) values (org, per, least(n, cap))
    on conflict (organization_id, period) do nothing
    returning queries into used;
  if found then return used; end if;
  select queries into used from organization_usage where organization_id = org and period = per for update;
  granted := greatest(0, least(n, cap - used));
  if granted > 0 then
    update organization_usage set queries = used + granted where organization_id = org and period = per;
  end if;
  return granted;
end
$body$`);
  }

  override down(): void {
    this.addSql(`drop function if exists reserve_queries(uuid, text, integer)`);
    this.addSql(`drop function if exists rate_hits(text[], integer[])`);
  }
}
