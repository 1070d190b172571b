/**
 * Malformed ids stop at the edge: an `ID` argument that is neither a uuid (every id this service
 * issues) nor an `@handle` (agents are also named by handle) can match nothing, so the field
 * answers NOT_FOUND before its resolver runs, and no such text ever reaches a uuid column as a
 * database error. A field added later is covered without doing anything.
 *
 * IDs inside input objects (`datastoreIds`, `conversationId`) are left to the services'
 * lookups (db/find.ts), which name the field they belong to.
 */
import { getNullableType, isListType, isScalarType, type GraphQLArgument } from 'graphql';
import type { FieldCheck } from './field-guard.ts';
import { AppError } from '../errors.ts';
import { isId } from '../ids.ts';

/** A uuid, or `@` and a name the agent service resolves (or, anywhere else, finds nothing). */
export function isWellFormedId(value: string): boolean {
  return isId(value) || (value.length > 1 && value.length <= 100 && value.startsWith('@'));
}

function isIdArgument(arg: GraphQLArgument): boolean {
  const type = getNullableType(arg.type);
  const item = isListType(type) ? getNullableType(type.ofType) : type;
  return isScalarType(item) && item.name === 'ID';
}

/** Throws NOT_FOUND naming the first ID argument that cannot be an id. */
export function assertWellFormedIds(args: Record<string, unknown>, names: readonly string[]): void {
  for (const name of names) {
    const value = args[name];
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && !isWellFormedId(v))) {
      throw new AppError('NOT_FOUND', `Not found: ${name} is not a well-formed id.`, { field: name });
    }
  }
}

/** Every field with an ID argument. */
export const wellFormedIdCheck: FieldCheck = (field) => {
  const names = field.args.filter(isIdArgument).map((a) => a.name);
  return names.length ? (args) => assertWellFormedIds(args, names) : null;
};
