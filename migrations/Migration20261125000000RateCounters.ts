import { Migration } from '@mikro-orm/migrations';

/**
 * Request rates and the sign-in throttle, kept where every process sees them and a restart
 * keeps them. One row per key: its hits in the current window and when that window ends (a
 * window opens at a key's first hit, as the in-memory limiters did). A hit is one upsert that
 * also starts a new window for a key whose window has ended (src/limits/rates.ts); rows of keys
 * never seen again are deleted now and then by `expires_at`.
 */
export class Migration20261125000000RateCounters extends Migration {
  override up(): void {
    this.addSql(`create table rate_counters (
  key text primary key,
  hits integer not null,
  expires_at timestamptz not null
)`);
    this.addSql(`create index rate_counters_expires_at_idx on rate_counters (expires_at)`);
  }

  override down(): void {
    this.addSql(`drop table if exists rate_counters`);
  }
}
