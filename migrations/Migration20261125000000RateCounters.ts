import { Migration } from '@mikro-orm/migrations';

/**
 * Request rates and the sign-in throttle, kept where every process sees them and a restart
 * keeps them. One row per key: its hits in the current window and when that window ends (a
 * window opens at a key's first hit, as the in-memory limiters did). A hit is one call of
 * `rate_hit`: one upsert that also starts a new window for a key whose window has ended. It is a
 * PL/pgSQL function for the reason `reserve_query` is one: its plan is kept per connection, and an
 * anonymous question pays it before its first frame. Rows of keys never seen again are deleted
 * now and then (src/limits/rates.ts).
 */
export class Migration20261125000000RateCounters extends Migration {
  override up(): void {
    this.addSql(`create table rate_counters (
  key text primary key,
  hits integer not null,
  expires_at timestamptz not null
)`);
    // No index on expires_at: it would cost every hit a second index write (a third of the hit on
    // PGlite), while the prune that would use it runs once a minute over rows of recent minutes.

    // One hit on each key (the keys must differ); returns each key's hits in its window with this
    // one, and the seconds left of that window.
    this.addSql(`create or replace function rate_hit(keys text[], windows integer[]) returns table (key text, hits integer, retry_after integer) language plpgsql as $body$
#variable_conflict use_column
begin
  return query
  insert into rate_counters as c (key, hits, expires_at)
    select t.k, 1, now() + make_interval(secs => t.w) from unnest(keys, windows) as t(k, w)
  on conflict on constraint rate_counters_pkey do update set
    hits = case when c.expires_at > now() then c.hits + 1 else 1 end,
    expires_at = case when c.expires_at > now() then c.expires_at else excluded.expires_at end
  returning c.key, c.hits, greatest(1, ceil(extract(epoch from c.expires_at - now())))::integer;
end
$body$`);
  }

  override down(): void {
    this.addSql(`drop function if exists rate_hit(text[], integer[])`);
    this.addSql(`drop table if exists rate_counters`);
  }
}
