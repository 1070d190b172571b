import { CompiledQuery } from 'kysely';
import type { Em } from './orm.ts';

/**
 * SQL with `$1` placeholders sent as is, inside `em`'s transaction when it has one. MikroORM's
 * own `execute` expands array parameters into lists; bulk statements need real array parameters.
 */
export async function rawQuery<R = Record<string, unknown>>(em: Em, sql: string, params: unknown[] = []): Promise<R[]> {
  const trx = em.getTransactionContext() as { executeQuery?: (q: CompiledQuery) => Promise<{ rows: R[] }> } | undefined;
  const executor = trx?.executeQuery ? trx : (em.getConnection().getClient() as unknown as { executeQuery: (q: CompiledQuery) => Promise<{ rows: R[] }> });
  const result = await executor.executeQuery!(CompiledQuery.raw(sql, params));
  return result.rows;
}
