import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

function literal(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literal(f.value)]));
    case Kind.LIST:
      return ast.values.map(literal);
    case Kind.NULL:
      return null;
    default:
      throw new GraphQLError('Variables are not allowed inside a JSON literal.');
  }
}

const asObject = (value: unknown) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GraphQLError('JSONObject must be an object.');
  }
  return value as Record<string, unknown>;
};

/** A JSON object (config of a datasource, free metadata). */
export const GraphQLJSONObject = new GraphQLScalarType({
  name: 'JSONObject',
  description: 'A JSON object.',
  serialize: asObject,
  parseValue: asObject,
  parseLiteral: (ast) => asObject(literal(ast)),
});
