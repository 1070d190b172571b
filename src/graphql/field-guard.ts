import { isObjectType, type GraphQLField, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';

/**
 * Runs a check on the arguments of every field it is given for (`checkFor` returns null to skip
 * a field) before the field resolves; a subscription's when it starts, not again for each event.
 * A field added later is covered without doing anything.
 */
export function guardFields(schema: GraphQLSchema, checkFor: (field: GraphQLField<unknown, unknown>) => ((args: Record<string, unknown>) => void) | null): GraphQLSchema {
  const subscription = schema.getSubscriptionType();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const check = checkFor(field);
      if (!check) continue;
      const wrap = (fn: GraphQLFieldResolver<unknown, unknown> | undefined) =>
        fn &&
        ((source: unknown, args: Record<string, unknown>, context: unknown, info: Parameters<GraphQLFieldResolver<unknown, unknown>>[3]) => {
          check(args);
          return fn(source, args, context, info);
        });
      if (type === subscription) field.subscribe = wrap(field.subscribe);
      else field.resolve = wrap(field.resolve ?? (((source: Record<string, unknown>) => source[field.name]) as GraphQLFieldResolver<unknown, unknown>));
    }
  }
  return schema;
}
