import type { EntityName, FilterQuery, FindOneOptions } from '@mikro-orm/core';
import type { Em } from './orm.ts';
import { notFound } from '../errors.ts';
import { isId } from '../ids.ts';

/**
 * The one "find or not found": a malformed id can never match a row, so it answers NOT_FOUND
 * without asking the database (which would refuse it as text that is not a uuid).
 * `where` narrows the match (e.g. to the caller's organization); `what` names the thing in the error.
 * Throws NOT_FOUND.
 */
export async function findOr404<T extends object, P extends string = never>(
  em: Em,
  entity: EntityName<T>,
  id: string,
  what: string,
  where: FilterQuery<T> = {} as FilterQuery<T>,
  options?: FindOneOptions<T, P>,
): Promise<T> {
  const found = await findById(em, entity, id, where, options);
  if (!found) throw notFound(what);
  return found as T;
}

/** The row with this id (and `where`), or null; a malformed id is null without a query. */
export async function findById<T extends object, P extends string = never>(
  em: Em,
  entity: EntityName<T>,
  id: string,
  where: FilterQuery<T> = {} as FilterQuery<T>,
  options?: FindOneOptions<T, P>,
): Promise<T | null> {
  if (!isId(id)) return null;
  return (await em.findOne(entity, { ...(where as object), id } as never, options)) as T | null;
}
