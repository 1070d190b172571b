/**
 * JSON Schema (the 2020-12 dialect of OpenAPI 3.1) read off the shared GraphQL schema, so the
 * REST description cannot drift from what the resolvers accept and return: request bodies from
 * input types (with the bounds their class-validator decorators enforce), responses from the
 * selection a row's GraphQL document makes.
 */
import { getMetadataStorage as validationMetadata } from 'class-validator';
import {
  getNamedType,
  GraphQLNonNull,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  parse,
  type DocumentNode,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  typeFromAST,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { getMetadataStorage as typeGraphqlMetadata } from 'type-graphql';
import { restField, type FieldNames } from './fields.ts';

export type JsonSchema = { [keyword: string]: unknown };

/** What a row's hand-written part of its description may ask of the generator. */
export interface SchemaTools {
  /**
   * The JSON of `selection` (GraphQL field syntax) on the output type `typeName`; `rename` maps
   * GraphQL field names to REST names, `add` describes properties the REST row adds.
   */
  select(typeName: string, selection: string, opts?: { rename?: Record<string, string>; add?: Record<string, JsonSchema> }): JsonSchema;
}

const SCALARS: Record<string, JsonSchema> = {
  String: { type: 'string' },
  ID: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTimeISO: { type: 'string', format: 'date-time' },
  JSONObject: { type: 'object' },
};

export function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type !== 'string') return { anyOf: [schema, { type: 'null' }] };
  return { ...schema, type: [schema.type, 'null'], ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}) };
}

function scalar(name: string, description?: string | null): JsonSchema {
  const known = SCALARS[name];
  return { ...(known ?? {}), ...(description && !known ? { description } : {}) };
}

export function createSchemaTools(schema: GraphQLSchema): SchemaTools & {
  /** The JSON of the root field an operation document selects, as the REST row returns it unchanged. */
  operationResult(document: string): JsonSchema;
  /** The variables of a document: name -> GraphQL input type. */
  variables(document: string): Map<string, GraphQLInputType>;
  /** A variable's JSON, its fields named as REST names them (`names` maps GraphQL paths, as rest/fields.ts). */
  variable(type: GraphQLInputType, path: string, names?: FieldNames): JsonSchema;
} {
  const bounds = inputBounds();

  function inputJson(type: GraphQLInputType, path: string, names: FieldNames): JsonSchema {
    // GraphQL takes null for any nullable input field, as if it were absent.
    if (!isNonNullType(type)) return nullable(inputJson(new GraphQLNonNull(type), path, names));
    const t = type.ofType;
    if (isListType(t)) return { type: 'array', items: inputJson(t.ofType, `${path}[0]`, names) };
    if (isEnumType(t)) return { type: 'string', enum: t.getValues().map((v) => v.name) };
    if (isScalarType(t)) return scalar(t.name, t.description);
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    const limits = bounds.get(t.name) ?? {};
    for (const field of Object.values(t.getFields())) {
      const rest = restField(`${path}.${field.name}`, names);
      const name = rest.slice(rest.lastIndexOf('.') + 1);
      const description = [field.description, field.deprecationReason].filter(Boolean).join(' ');
      properties[name] = {
        ...inputJson(field.type, `${path}.${field.name}`, names),
        ...(limits[field.name] ?? {}),
        ...(description ? { description } : {}),
        ...(field.deprecationReason ? { deprecated: true } : {}),
        ...(field.defaultValue !== undefined ? { default: field.defaultValue } : {}),
      };
      if (isNonNullType(field.type) && field.defaultValue === undefined) required.push(name);
    }
    return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false, ...(t.description ? { description: t.description } : {}) };
  }

  function selectionJson(type: GraphQLOutputType, set: SelectionSetNode | undefined): JsonSchema {
    if (!isNonNullType(type)) return nullable(selectionJson(new GraphQLNonNull(type), set));
    const t = type.ofType;
    if (isListType(t)) return { type: 'array', items: selectionJson(t.ofType, set) };
    if (isEnumType(t)) return { type: 'string', enum: t.getValues().map((v) => v.name) };
    if (isScalarType(t)) return scalar(t.name, t.description);
    if (!isObjectType(t) || !set) throw new Error(`Cannot describe ${String(t)} as JSON without a selection.`);
    return objectJson(t, set, {});
  }

  function objectJson(type: GraphQLObjectType, set: SelectionSetNode, rename: Record<string, string>): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    for (const sel of set.selections) {
      if (sel.kind !== Kind.FIELD) throw new Error('Only plain fields are described.');
      const field: GraphQLField<unknown, unknown> | undefined = type.getFields()[sel.name.value];
      if (!field) throw new Error(`${type.name} has no field ${sel.name.value}.`);
      const name = sel.alias?.value ?? rename[sel.name.value] ?? sel.name.value;
      properties[name] = { ...selectionJson(field.type, sel.selectionSet), ...(field.description ? { description: field.description } : {}) };
    }
    return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false, ...(type.description ? { description: type.description } : {}) };
  }

  const operation = (document: string): OperationDefinitionNode => {
    const op = parse(document).definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
    if (!op) throw new Error('No operation in the document.');
    return op;
  };

  return {
    select(typeName, selection, { rename = {}, add = {} } = {}) {
      const type = schema.getType(typeName);
      if (!isObjectType(type)) throw new Error(`${typeName} is not an output object type.`);
      const doc: DocumentNode = parse(`{ ${selection} }`);
      const json = objectJson(type, (doc.definitions[0] as OperationDefinitionNode).selectionSet, rename);
      return { ...json, properties: { ...(json.properties as object), ...add }, required: [...(json.required as string[]), ...Object.keys(add)] };
    },
    operationResult(document) {
      const op = operation(document);
      const root = { query: schema.getQueryType(), mutation: schema.getMutationType(), subscription: schema.getSubscriptionType() }[op.operation];
      const sel = op.selectionSet.selections[0];
      if (!root || sel?.kind !== Kind.FIELD) throw new Error('The operation selects no root field.');
      const field = root.getFields()[sel.name.value];
      if (!field) throw new Error(`No root field ${sel.name.value}.`);
      return { ...selectionJson(field.type, sel.selectionSet), ...(getNamedType(field.type).description ? { description: getNamedType(field.type).description } : {}) };
    },
    variables(document) {
      const vars = new Map<string, GraphQLInputType>();
      for (const v of operation(document).variableDefinitions ?? []) {
        const type = typeFromAST(schema, v.type) as GraphQLInputType | undefined;
        if (!type) throw new Error(`Unknown type of $${v.variable.name.value}.`);
        vars.set(v.variable.name.value, type);
      }
      return vars;
    },
    variable(type, path, names = {}) {
      return inputJson(type, path, names);
    },
  };
}

/**
 * The bounds an input class enforces with class-validator (min, max, length), per GraphQL input
 * type and field: what a request is refused for, said before it is sent.
 */
function inputBounds(): Map<string, Record<string, JsonSchema>> {
  const byType = new Map<string, Record<string, JsonSchema>>();
  for (const input of typeGraphqlMetadata().inputTypes) {
    const fields: Record<string, JsonSchema> = {};
    for (const rule of validationMetadata().getTargetValidationMetadatas(input.target, '', true, false)) {
      const [a, b] = rule.constraints ?? [];
      const bound: JsonSchema | null =
        rule.name === 'min' ? { minimum: a } :
        rule.name === 'max' ? { maximum: a } :
        rule.name === 'maxLength' ? { maxLength: a } :
        rule.name === 'minLength' ? { minLength: a } :
        rule.name === 'isLength' ? { minLength: a, ...(b === undefined ? {} : { maxLength: b }) } :
        null;
      if (bound && rule.propertyName) fields[rule.propertyName] = { ...fields[rule.propertyName], ...bound };
    }
    byType.set(input.name, fields);
  }
  return byType;
}
