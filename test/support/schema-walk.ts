/**
 * Walks the built GraphQL schema so schema-wide tests cover fields added later without being
 * edited: argument values generated from their types, every ID inside an argument found, and
 * selection sets of every field, built recursively.
 */
import {
  getNamedType,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';

export type Operation = 'query' | 'mutation' | 'subscription';

export interface RootField {
  operation: Operation;
  field: GraphQLField<unknown, unknown>;
}

export function rootFields(schema: GraphQLSchema): RootField[] {
  const roots: [Operation, GraphQLObjectType | null | undefined][] = [
    ['query', schema.getQueryType()],
    ['mutation', schema.getMutationType()],
    ['subscription', schema.getSubscriptionType()],
  ];
  return roots.flatMap(([operation, type]) => (type ? Object.values(type.getFields()).map((field) => ({ operation, field })) : []));
}

/** A path into the arguments: an argument name, then input fields; `0` stands for a list item. */
export type ArgPath = (string | 0)[];

/** Every place an ID can be given in a field's arguments (directly, in lists, inside input objects). */
export function idPaths(args: readonly GraphQLArgument[]): ArgPath[] {
  const found: ArgPath[] = [];
  const walk = (type: GraphQLInputType, path: ArgPath, seen: Set<string>) => {
    if (isNonNullType(type)) return walk(type.ofType, path, seen);
    if (isListType(type)) return walk(type.ofType, [...path, 0], seen);
    if (isInputObjectType(type)) {
      if (seen.has(type.name)) return;
      for (const f of Object.values(type.getFields())) walk(f.type, [...path, f.name], new Set([...seen, type.name]));
      return;
    }
    if (type.name === 'ID') found.push(path);
  };
  for (const arg of args) walk(arg.type, [arg.name], new Set());
  return found;
}

export interface ValueOptions {
  /** The value of an ID found at `path` (the target of a case, or a real record's id). */
  id: (path: ArgPath) => string;
  /** Arguments and input fields on this path are given even when optional (the ID under test). */
  include?: ArgPath;
}

/** Plausible text for well-known names, so validation lets the request reach its lookup. */
const TEXT: Record<string, string> = {
  query: 'What is in the documents?',
  text: 'Ada Lovelace wrote the first program.',
  fileBuffer: Buffer.from('hello').toString('base64'),
  fileType: 'txt',
  fileName: 'hello.txt',
  type: 'text/plain',
  email: 'someone@example.test',
  password: 'correct horse battery',
  description: 'A description.',
};

const startsWith = (path: ArgPath, prefix: ArgPath) => prefix.length >= path.length && path.every((p, i) => p === prefix[i]);

/** A minimal valid value of `type`: required fields only, plus whatever leads to `include`. */
export function valueOf(type: GraphQLInputType, path: ArgPath, opts: ValueOptions): unknown {
  if (isNonNullType(type)) return valueOf(type.ofType, path, opts);
  if (isListType(type)) return opts.include && startsWith([...path, 0], opts.include) ? [valueOf(type.ofType, [...path, 0], opts)] : [];
  if (isInputObjectType(type)) {
    const value: Record<string, unknown> = {};
    for (const f of Object.values(type.getFields())) {
      const here = [...path, f.name];
      const wanted = isNonNullType(f.type) && f.defaultValue === undefined;
      if (wanted || (opts.include && startsWith(here, opts.include))) value[f.name] = valueOf(f.type, here, opts);
    }
    return value;
  }
  if (isEnumType(type)) {
    const values = type.getValues().map((v) => v.name);
    return values.includes('text') ? 'text' : values[0];
  }
  const name = String(path.filter((p) => p !== 0).at(-1) ?? '');
  switch (type.name) {
    case 'ID':
      return opts.id(path);
    case 'String':
      return TEXT[name] ?? (/url/i.test(name) ? 'https://example.com/' : 'x');
    case 'Int':
      return 1;
    case 'Float':
      return 0;
    case 'Boolean':
      return false;
    case 'DateTimeISO':
      return new Date().toISOString();
    case 'JSONObject':
      return {};
    default:
      throw new Error(`schema-walk: no sample value for the scalar ${type.name}: add one`);
  }
}

/** `($a: T, …)` and `(name: $a, …)` for the arguments to send, and the variables. */
export function argumentsOf(args: readonly GraphQLArgument[], opts: ValueOptions, prefix = 'v') {
  const defs: string[] = [];
  const uses: string[] = [];
  const variables: Record<string, unknown> = {};
  for (const arg of args) {
    const required = isNonNullType(arg.type) && arg.defaultValue === undefined;
    if (!required && !(opts.include && opts.include[0] === arg.name)) continue;
    const variable = `${prefix}_${arg.name}`;
    defs.push(`$${variable}: ${arg.type.toString()}`);
    uses.push(`${arg.name}: $${variable}`);
    variables[variable] = valueOf(arg.type, [arg.name], opts);
  }
  return { defs, uses, variables };
}

/**
 * Every field of `type` and of the types under it, `depth` levels down (`__typename` on each
 * object, so the caller can tell which types it read). Fields whose arguments are required get
 * values (IDs from `opts.id`); their variables are collected into `variables`.
 */
export function selectionOf(
  type: GraphQLOutputType,
  depth: number,
  schema: GraphQLSchema,
  opts: { id: (path: ArgPath) => string; defs: string[]; variables: Record<string, unknown> },
  counter = { n: 0 },
): string {
  const named: GraphQLNamedType = getNamedType(type);
  if (isLeafType(named)) return '';
  if (isAbstractType(named)) {
    const parts = schema.getPossibleTypes(named).map((t) => `... on ${t.name} ${selectionOf(t, depth, schema, opts, counter)}`);
    return `{ __typename ${parts.join(' ')} }`;
  }
  if (!isObjectType(named)) return '';
  const fields: string[] = ['__typename'];
  for (const field of Object.values(named.getFields())) {
    const args = argumentsOf(field.args, { id: opts.id }, `a${++counter.n}`);
    opts.defs.push(...args.defs);
    Object.assign(opts.variables, args.variables);
    const call = `${field.name}${args.uses.length ? `(${args.uses.join(', ')})` : ''}`;
    if (isLeafType(getNamedType(field.type))) fields.push(call);
    else if (depth > 0) fields.push(`${call} ${selectionOf(field.type, depth - 1, schema, opts, counter)}`);
  }
  return `{ ${fields.join(' ')} }`;
}

/**
 * The record an ID most likely names, from its argument's name or (for a bare `id`) its field's:
 * `real` maps a kind (agent, datastore, datasource, conversation, form, apiKey) to a record's id.
 * An unknown name gets a well-formed id of nothing.
 */
export function realId(real: Record<string, string>, field: string, path: ArgPath, fallback: () => string): string {
  const name = String(path.filter((p) => p !== 0).at(-1));
  const owner = name === 'id' && path.length === 1 ? field : name;
  const kinds: [RegExp, string][] = [
    [/conversation/i, 'conversation'],
    [/datasource|document|upload/i, 'datasource'],
    [/datastore/i, 'datastore'],
    [/agent|universal/i, 'agent'],
    [/submission/i, 'submission'],
    [/form/i, 'form'],
    [/apikey/i, 'apiKey'],
    [/message/i, 'message'],
  ];
  const kind = kinds.find(([re]) => re.test(owner))?.[1];
  return (kind && real[kind]) ?? fallback();
}

/** Object types reachable from `from` through fields (not through arguments). */
export function reachableObjectTypes(schema: GraphQLSchema, from: readonly GraphQLOutputType[]): Set<string> {
  const seen = new Set<string>();
  const visit = (type: GraphQLOutputType) => {
    const named = getNamedType(type);
    if (isAbstractType(named)) return schema.getPossibleTypes(named).forEach(visit);
    if (!isObjectType(named) || seen.has(named.name)) return;
    seen.add(named.name);
    for (const f of Object.values(named.getFields())) visit(f.type);
  };
  from.forEach(visit);
  return seen;
}

/** The `__typename`s of every object in a response. */
export function typenames(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => typenames(v, into));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '__typename' && typeof v === 'string') into.add(v);
      else typenames(v, into);
    }
  }
  return into;
}
