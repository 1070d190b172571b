import { isObjectType, type GraphQLField, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';

/** A check of a field's arguments, or null when the field needs none. */
export type FieldCheck = (field: GraphQLField<unknown, unknown>) => ((args: Record<string, unknown>) => void) | null;

/**
 * Runs the checks that apply to a field, in order, on its arguments before it resolves (one
 * wrapper per field); a subscription's when it starts, not again for each event. A field added
 * later is covered without doing anything.
 */
export function guardFields(schema: GraphQLSchema, checksFor: FieldCheck[]): GraphQLSchema {
  const subscription = schema.getSubscriptionType();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const checks = checksFor.map((checkFor) => checkFor(field)).filter((c) => c !== null);
      if (!checks.length) continue;
      const wrap = (fn: GraphQLFieldResolver<unknown, unknown> | undefined) =>
        fn &&
        ((source: unknown, args: Record<string, unknown>, context: unknown, info: Parameters<GraphQLFieldResolver<unknown, unknown>>[3]) => {
          for (const check of checks) check(args);
          return fn(source, args, context, info);
        });
      if (type === subscription) field.subscribe = wrap(field.subscribe);
      else field.resolve = wrap(field.resolve ?? (((source: Record<string, unknown>) => source[field.name]) as GraphQLFieldResolver<unknown, unknown>));
    }
  }
  return schema;
}
