import { createHash } from 'node:crypto';
import { PostgreSqlConnection } from '@mikro-orm/postgresql';
import { CompiledQuery } from 'kysely';
import type { Pool } from 'pg';
import type { Em } from './orm.ts';

/**
 * SQL with `$1` placeholders sent as is, inside `em`'s transaction when it has one. MikroORM's
 * own `execute` expands array parameters into lists; bulk statements need real array parameters.
 *
 * `prepared`: on PostgreSQL and outside a transaction, the statement goes out as a named prepared
 * statement (named by its text's hash) on the pool itself, so each connection parses and analyses
 * it once instead of on every call (0.6 ms of a datastore query's search: docs/benchmarks.md).
 * Each run is still planned for its parameters (plan_cache_mode, VECTOR_SEARCH_SETTINGS). A
 * prepared statement lives as long as its connection, so a caller must keep the number of
 * distinct texts it prepares small: nothing that varies per call goes into the text. Elsewhere
 * (PGlite, a transaction), the statement is sent as usual.
 */
export async function rawQuery<R = Record<string, unknown>>(em: Em, sql: string, params: unknown[] = [], opts: { prepared?: boolean } = {}): Promise<R[]> {
  const trx = em.getTransactionContext() as { executeQuery?: (q: CompiledQuery) => Promise<{ rows: R[] }> } | undefined;
  if (opts.prepared && !trx) {
    const connection = em.getConnection();
    if (connection instanceof PostgreSqlConnection) {
      const pool = (await connection.getNativeClient()) as Pool;
      const result = await pool.query<R & object>({ name: statementName(sql), text: sql, values: params });
      return result.rows;
    }
  }
  const executor = trx?.executeQuery ? trx : (em.getConnection().getClient() as unknown as { executeQuery: (q: CompiledQuery) => Promise<{ rows: R[] }> });
  const result = await executor.executeQuery!(CompiledQuery.raw(sql, params));
  return result.rows;
}

/** The statement's name on every connection: a hash of its text (names must be unique per text). */
const names = new Map<string, string>();
export function statementName(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    name = `q_${createHash('sha1').update(sql).digest('hex')}`;
    // The texts are few (see rawQuery); the bound only guards against a caller that breaks that rule.
    if (names.size >= 1000) names.clear();
    names.set(sql, name);
  }
  return name;
}
