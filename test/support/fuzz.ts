/**
 * What the generated-input tests (fuzz-rest, fuzz-graphql) share: the hostile values they
 * throw, a watch on every table that tells which rows a request changed, and the checks every
 * answer must pass (no 5xx; a 4xx is a JSON error naming the field at fault).
 */
import fc from 'fast-check';
import pg from 'pg';
import type { TestApp } from './app.ts';

/**
 * Cases per REST row and per GraphQL mutation: 1,000 on the embedded database (issue 16's
 * count) and 100 on PostgreSQL by default. CI runs the PostgreSQL suite beside the PGlite one on
 * the same two cores, and fuzz cases are all CPU: 1,000 there too would slow the PGlite suite,
 * CI's long pole, by as much again. The cases check the same service code on both; what differs
 * on PostgreSQL (the database's own answers and errors) the hundred cases and the rest of that
 * suite cover. FUZZ_RUNS=1000 on PostgreSQL, or 20000 on either, for a longer hunt.
 */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS) || (process.env.TEST_DATABASE_URL ? 100 : 1000);
/** Replays a run (the seed of every run is printed). */
export const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);

// --- Hostile values -------------------------------------------------------------------------

export const NAN_LIKE = ['NaN', 'Infinity', '-Infinity', '1e309', '-1e309', '0x1F', '1_000', '٣', '1e-400', '+1', '  7  ', ''];

/** Text that is legal JSON but odd: lone surrogates, bidi overrides, zero-width, NUL, combining marks. */
export const ODD_TEXT = [
  '\ud800',
  'a\udfffb',
  '\u202eevil\u202c',
  'שלום עולם',
  '\u200b\u200c\u200d\ufeff',
  'a\u0000b',
  'e\u0301\u0301\u0301\u0301',
  '𝕳𝖊𝖑𝖑𝖔 👩‍👩‍👧‍👦',
  '\u0007\u001b[31m',
  '%00%2F..%2F',
  '../../etc/passwd',
  "'; drop table agents; --",
  '<script>alert(1)</script>',
  '{{7*7}} ${7*7}',
  '\r\n\r\nX-Injected: 1',
];

export const HUGE_NUMBERS = [2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, -(2 ** 53) - 2, 1e308, -1e308, Number.MAX_VALUE, Number.MIN_VALUE, 1e-300, -1, -0.5, 0, 0.5, 1.5, 4_294_967_296];

/** Nested arrays or objects `depth` deep, as a value (JSON.stringify copes up to a few thousand). */
export function deepValue(depth: number, kind: 'array' | 'object'): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v };
  return v;
}

/** The same as JSON text, for depths JSON.stringify would not reach. */
export function deepText(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + '1' + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

export const oddString = fc.oneof(
  fc.constantFrom(...ODD_TEXT, ...NAN_LIKE),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  // Past every length limit (20,000 characters at most) without making each case a megabyte.
  fc.constantFrom(20_001, 60_000).map((n) => 'ä'.repeat(n)),
);

export const oddNumber = fc.oneof(fc.constantFrom(...HUGE_NUMBERS), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer());

/** Any value of the wrong kind, odd text and odd numbers included. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': null }, ['a', 1]),
  oddString,
  oddNumber,
  fc.constantFrom(50, 200, 2000).chain((d) => fc.constantFrom<'array' | 'object'>('array', 'object').map((k) => deepValue(d, k))),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Path segments that name nothing this service has. */
export const badIds = fc.oneof(
  fc.constantFrom(
    'not-a-uuid',
    '123',
    '-1',
    '0',
    '9'.repeat(400),
    '00000000-0000-0000-0000-000000000000',
    'FFFFFFFF-FFFF-7FFF-BFFF-FFFFFFFFFFFF',
    '%2F',
    'a%2Fb',
    '%2e%2e',
    '%00',
    '%E0%A4%A',
    '%ED%A0%80',
    '%F0%9F%98',
    '@',
    '@%00',
    '@' + 'x'.repeat(300),
    encodeURIComponent('\u202e'),
    'null',
    'undefined',
    '__proto__',
    'constructor',
    '1e309',
    'NaN',
  ),
  fc.uuid().map((u) => u),
  fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent),
);

// --- Rows changed ---------------------------------------------------------------------------

export interface RowChange {
  table: string;
  op: string;
  row: string;
}

export interface RowWatch {
  /** The tables watched and the ones left out (with why). */
  tables: string[];
  /**
   * Where the change log stands. On PGlite every logged row is announced (pg_notify) to this
   * process as the writing transaction commits, before the service can answer, so reading it costs
   * no query; on PostgreSQL announcements arrive on their own connection, with no order against
   * the HTTP answer, so it is read (one query).
   */
  mark(): Promise<number>;
  /** Rows changed since `mark`, net: a row changed and changed back within the span is no change. */
  since(mark: number): Promise<RowChange[]>;
  /**
   * After an accepted request: waits until its writes stop (an answer reserves the next
   * question's allowance in the background, after its response), so they are not taken for the
   * next request's. The service tracks that work itself (QueryAllowance.settled), so no waiting
   * on a clock.
   */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A trigger on every table of the service logs each row it writes (a hash of the row before
 * and after, minus columns that move on every read), and announces it. Exact where counting
 * every table before and after a request is not: it sees updates that keep the counts. And
 * cheaper: a request that wrote nothing, the usual refusal, costs no query at all on PGlite.
 * `ignore`: table -> columns that change on purpose whatever the request (a key's last use).
 * `skip`: tables that count refused requests on purpose (the rate counters).
 */
export async function watchRows(app: TestApp, opts: { ignore?: Record<string, string[]>; skip?: string[] } = {}): Promise<RowWatch> {
  const query = await rawQuery(app);
  const skip = new Set(opts.skip ?? []);
  const found = await query<{ schema: string; name: string }>(
    `select table_schema as schema, table_name as name from information_schema.tables
      where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema') and table_schema not like 'pgboss%'`,
  );
  const tables = found.filter((t) => t.schema === 'public' && !skip.has(t.name)).map((t) => t.name);
  await query(`create table fuzz_row_changes (id bigserial primary key, tbl text not null, old_hash text, new_hash text, op text not null, row_text text)`);
  await query(`create function fuzz_row_change() returns trigger language plpgsql as $$
declare o text; n text; logged bigint;
begin
  if tg_op <> 'INSERT' then o := md5((to_jsonb(old) - tg_argv)::text); end if;
  if tg_op <> 'DELETE' then n := md5((to_jsonb(new) - tg_argv)::text); end if;
  if o is not distinct from n then return null; end if;
  insert into fuzz_row_changes (tbl, old_hash, new_hash, op, row_text)
    values (tg_table_name, o, n, tg_op, left(coalesce(to_jsonb(new), to_jsonb(old))::text, 300))
    returning id into logged;
  perform pg_notify('fuzz_row_change', logged::text);
  return null;
end $$`);
  for (const t of tables) {
    // At least one argument: with none, tg_argv is null and every hash would be null.
    const args = ['-', ...(opts.ignore?.[t] ?? [])].map((c) => `'${c}'`).join(', ');
    await query(`create trigger fuzz_row_change after insert or update or delete on public."${t}" for each row execute function fuzz_row_change(${args})`);
  }
  const lite = app.db.pglite;
  let announced = 0;
  const unlisten = lite ? await lite.listen('fuzz_row_change', (id) => (announced = Math.max(announced, Number(id)))) : null;
  const watch: RowWatch = {
    tables,
    mark: async () => (lite ? announced : Number((await query<{ id: string }>(`select coalesce(max(id), 0) as id from fuzz_row_changes`))[0]!.id)),
    async since(mark) {
      const rows = await query<{ id: string; tbl: string; old_hash: string | null; new_hash: string | null; op: string; row_text: string }>(
        `select id, tbl, old_hash, new_hash, op, row_text from fuzz_row_changes where id > $1 order by id`,
        [mark],
      );
      // Net per table: versions that appeared minus versions that went away.
      const balance = new Map<string, number>();
      const bump = (key: string, by: number) => balance.set(key, (balance.get(key) ?? 0) + by);
      for (const r of rows) {
        if (r.old_hash) bump(`${r.tbl}:${r.old_hash}`, -1);
        if (r.new_hash) bump(`${r.tbl}:${r.new_hash}`, 1);
      }
      const changed = new Set([...balance].filter(([, n]) => n !== 0).map(([k]) => k.slice(0, k.indexOf(':'))));
      return rows.filter((r) => changed.has(r.tbl)).map((r) => ({ table: r.tbl, op: r.op, row: r.row_text }));
    },
    settle: () => app.services.limits.queries.settled(),
    close: async () => {
      await unlisten?.();
      await query.close();
    },
  };
  return watch;
}

type Query = (<T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>) & { close(): Promise<void> };

/** Straight to the database (the ORM's per-call cost would double the run). */
async function rawQuery(app: TestApp): Promise<Query> {
  const lite = app.db.pglite;
  if (lite) {
    const q = (async (text: string, params?: unknown[]) => (await lite.query(text, params)).rows) as Query;
    q.close = async () => {};
    return q;
  }
  const client = new pg.Client({ connectionString: app.databaseUrl });
  await client.connect();
  const q = (async (text: string, params?: unknown[]) => (await client.query(text, params)).rows) as Query;
  q.close = () => client.end();
  return q;
}

// --- Checks ---------------------------------------------------------------------------------

/** Does the name an error gives (`details.field` or its message) point at the field at fault? */
export function namesField(expected: string, error: { message?: unknown; details?: { field?: unknown; fields?: unknown } }): boolean {
  const field = typeof error.details?.field === 'string' ? error.details.field : null;
  const fields = error.details?.fields && typeof error.details.fields === 'object' ? Object.keys(error.details.fields) : [];
  const norm = (s: string) => s.replace(/\[\d+\]/g, '');
  const related = (named: string) => {
    const a = norm(named);
    const b = norm(expected);
    // The field itself, a field inside it (`filters` -> `filters.custom_ids`), or the field holding it.
    return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
  };
  if (field !== null && related(field)) return true;
  if (fields.some(related)) return true;
  const leaf = norm(expected).split('.').at(-1)!;
  return typeof error.message === 'string' && leaf.length > 0 && new RegExp(`(^|[^A-Za-z0-9_])${leaf.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^A-Za-z0-9_]|$)`).test(error.message);
}

/** A short, printable form of a case for a failure message. */
export function show(value: unknown, max = 400): string {
  let text: string;
  try {
    text = JSON.stringify(value, (_k, v) => (typeof v === 'string' && v.length > 80 ? `${v.slice(0, 40)}…(${v.length} chars)` : v));
  } catch {
    text = String(value);
  }
  return text && text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Counts of cases by outcome, printed at the end of each target. */
export class Tally {
  cases = 0;
  readonly statuses = new Map<string, number>();
  add(outcome: string) {
    this.cases++;
    this.statuses.set(outcome, (this.statuses.get(outcome) ?? 0) + 1);
  }
  toString() {
    return `${this.cases} cases (${[...this.statuses].sort().map(([s, n]) => `${s}: ${n}`).join(', ')})`;
  }
}
