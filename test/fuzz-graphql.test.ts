/**
 * Generated variables for every GraphQL mutation (issue 16, item 2), read off the built schema:
 * FUZZ_RUNS cases per mutation (1,000 by default), each a valid set of variables (records of the
 * owner's organization) with one place broken: an input field or argument missing, added, null,
 * of the wrong type, a huge number, a NaN-like string, odd Unicode, JSON nested thousands deep.
 * Every answer: no 5xx and no INTERNAL; a BAD_USER_INPUT names the field at fault; a refused
 * mutation changes no row of any table. The service runs with ROLE=api (no worker writes rows).
 */
import fc from 'fast-check';
import { getNamedType, isEnumType, isInputObjectType, isListType, isNonNullType, isScalarType, type GraphQLField, type GraphQLInputType, type GraphQLSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchema } from '../src/graphql/schema.ts';
import { isErrorCode } from '../src/errors.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { FUZZ_RUNS, FUZZ_SEED, Tally, namesField, oddNumber, oddString, show, watchRows, wrongValue, type RowWatch } from './support/fuzz.ts';
import { createDatastore } from './support/ingest.ts';
import { realId, valueOf, type ArgPath } from './support/schema-walk.ts';

let app: TestApp;
// Built before the tests are collected: one test per mutation the schema has.
const schema: GraphQLSchema = await createSchema();
const names = Object.keys(schema.getMutationType()!.getFields());
let watch: RowWatch;
let owner: Awaited<ReturnType<typeof newOrganization>>;
/** Records the variables point at, by kind (schema-walk's realId); delete mutations get their own victims. */
const real: Record<string, string> = {};
const victims: Record<string, string> = {};

const one = async (query: string, variables: Record<string, unknown>, token = owner.apiKey) => {
  const res = await gql(app.url, query, variables, { token });
  if (!res.data) throw new Error(`${query}: ${JSON.stringify(res.errors)}`);
  return Object.values(res.data)[0] as Record<string, any>;
};

/** A record to delete, made again each time a case deletes it. */
const MAKE_VICTIM: Record<string, () => Promise<string>> = {
  deleteAgent: async () => (await one(`mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Victim' } })).id,
  deleteDatastore: async () => createDatastore(app, owner.apiKey, 'private', 'Victim'),
  deleteDatasource: async () => (await one(`mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id } }`, { i: { datastoreId: real.datastore, type: 'text', name: 'victim', text: 'Doomed.' } })).id,
  deleteForm: async () => (await one(`mutation($i: CreateFormInput!) { createForm(input: $i) { form { id } } }`, { i: { name: 'Victim', schema: FORM_SCHEMA } })).form.id,
  revokeApiKey: async () => (await one(`mutation { createApiKey(input: { name: "victim" }) { id } }`, {}, owner.session)).id,
};

/** Where the schema's minimal values are not a valid request (a text document needs its text). */
const BASES: Record<string, () => Record<string, unknown>> = {
  createDatasource: () => ({ input: { datastoreId: real.datastore, type: 'text', name: 'doc', text: 'Tickets are sold on board.' } }),
  createForm: () => ({ input: { name: 'F', schema: FORM_SCHEMA } }),
  processUpload: () => ({ datastoreId: real.datastore, id: real.upload }),
};

/** Mutations for a person signed in (a session), not an API key. */
const SIGNED_IN = new Set(['createApiKey', 'revokeApiKey', 'updateOrganization']);

const FORM_SCHEMA = { type: 'object', properties: { email: { type: 'string', format: 'email' } }, required: ['email'] };

beforeAll(async () => {
  app = await startTestApp({ ROLE: 'api', RATE_LIMIT_IP_PER_MINUTE: '1000000', RATE_LIMIT_VISITOR_PER_MINUTE: '100000', DEFAULT_MONTHLY_QUERY_LIMIT: '1000000000' });
  owner = await newOrganization(app.url, 'Fuzz');
  real.datastore = await createDatastore(app, owner.apiKey, 'private');
  real.agent = (await one(`mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Fuzzed', visibility: 'public', datastoreIds: [real.datastore] } })).id;
  real.datasource = (await one(`mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id } }`, { i: { datastoreId: real.datastore, type: 'text', name: 'doc', text: 'The ferry leaves at nine.' } })).id;
  real.form = (await one(`mutation($i: CreateFormInput!) { createForm(input: $i) { form { id } } }`, { i: { name: 'F', published: true, schema: FORM_SCHEMA } })).form.id;
  real.conversation = (await http('POST', `${app.api}/agents/${real.agent}/query`, { token: owner.apiKey, body: { query: 'When does the ferry leave?' } })).body.conversationId;
  const link = await one(`mutation($d: ID!) { createUploadLink(datastoreId: $d, input: { type: "text/plain", fileName: "a.txt" }) { id link } }`, { d: real.datastore });
  expect((await fetch(link.link, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'hello' })).status).toBe(200);
  real.upload = link.id;
  real.apiKey = (await one(`mutation { createApiKey(input: { name: "kept" }) { id } }`, {}, owner.session)).id;
  for (const [name, make] of Object.entries(MAKE_VICTIM)) victims[name] = await make();
  watch = await watchRows(app, { skip: ['rate_counters'], ignore: { api_keys: ['last_used_at'], sessions: ['last_seen_at', 'expires_at'] } });
}, 120_000);
afterAll(async () => {
  await watch?.close();
  await app?.close();
});

/** A field an input type describes: its path from the argument, and its type. */
interface Place {
  path: ArgPath;
  type: GraphQLInputType;
}

function places(field: GraphQLField<unknown, unknown>): Place[] {
  const out: Place[] = [];
  const walk = (type: GraphQLInputType, path: ArgPath, depth: number) => {
    out.push({ path, type });
    if (depth > 3) return;
    const inner = isNonNullType(type) ? type.ofType : type;
    if (isListType(inner)) return walk(inner.ofType, [...path, 0], depth + 1);
    if (isInputObjectType(inner)) for (const f of Object.values(inner.getFields())) walk(f.type, [...path, f.name], depth + 1);
  };
  for (const arg of field.args) walk(arg.type, [arg.name], 0);
  return out;
}

/** A value of the right type that a validation may still refuse (lengths, ranges, formats). */
function plausible(type: GraphQLInputType): fc.Arbitrary<unknown> {
  const named = getNamedType(type);
  if (isEnumType(named)) return fc.constantFrom(...named.getValues().map((v) => v.name));
  if (isScalarType(named)) {
    switch (named.name) {
      case 'Int':
        return fc.integer({ min: -5, max: 200_000 });
      case 'Float':
        return fc.double({ min: -3, max: 3, noNaN: true });
      case 'Boolean':
        return fc.boolean();
      case 'JSONObject':
        return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
      case 'DateTimeISO':
        return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      default:
        return fc.string({ maxLength: 24 });
    }
  }
  return fc.constant({});
}

const label = (path: ArgPath) => path.map((p, i) => (p === 0 ? '[0]' : `${i ? '.' : ''}${p === '' ? '""' : p}`)).join('');

interface GqlCase {
  variables: Record<string, unknown>;
  anonymous: boolean;
  /** The argument path at fault (a BAD_USER_INPUT must name it); null for a valid-ish case. */
  fault: ArgPath | null;
  what: string;
}

function define(obj: any, key: string | number, value: unknown) {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function casesFor(field: GraphQLField<unknown, unknown>, base: Record<string, unknown>): fc.Arbitrary<GqlCase> {
  const all = places(field);
  const anonymous = fc.constantFrom(false, false, false, false, false, false, false, false, false, true);
  const at = (value: Record<string, unknown>, path: ArgPath, set: ((parent: any, key: string | number) => void) | null) => {
    let node: any = value;
    path.slice(0, -1).forEach((k, i) => {
      if (node[k] === undefined || node[k] === null || typeof node[k] !== 'object') define(node, k, path[i + 1] === 0 ? [] : {});
      node = node[k];
    });
    if (set) set(node, path.at(-1)!);
  };
  // An accepted file is read in a worker (a tenth of a second or more each): held mostly to refusals.
  const heavy = field.name === 'universalProcess' ? 4 : 1;
  const arbs: fc.WeightedArbitrary<GqlCase>[] = [{ weight: 1, arbitrary: anonymous.map((a) => ({ variables: base, anonymous: a, fault: null, what: 'valid' })) }];
  if (all.length) {
    const placeArb = fc.constantFrom(...all);
    arbs.push(
      // Something of the right type where the schema allows it, so validation past coercion runs.
      { weight: heavy > 1 ? 1 : 3, arbitrary: fc.record({ anonymous, place: placeArb }).chain(({ anonymous: a, place }) => plausible(place.type).map((v) => {
        const variables = structuredClone(base);
        at(variables, place.path, (parent, key) => define(parent, key, v));
        return { variables, anonymous: a, fault: place.path, what: `${label(place.path)} = ${show(v, 60)}` };
      })) },
      { weight: 6 * heavy, arbitrary: fc.record({ anonymous, place: placeArb, v: fc.oneof(wrongValue, oddString, oddNumber, fc.constant(null)) }).map(({ anonymous: a, place, v }) => {
        const variables = structuredClone(base);
        at(variables, place.path, (parent, key) => define(parent, key, v));
        return { variables, anonymous: a, fault: place.path, what: `${label(place.path)} = ${show(v, 60)}` };
      }) },
      { weight: 2, arbitrary: fc.record({ anonymous, place: placeArb }).map(({ anonymous: a, place }) => {
        const variables = structuredClone(base);
        at(variables, place.path, (parent, key) => (Array.isArray(parent) ? parent.splice(Number(key), 1) : delete parent[key]));
        return { variables, anonymous: a, fault: place.path, what: `without ${label(place.path)}` };
      }) },
    );
    const objects = all.filter((p) => isInputObjectType(isNonNullType(p.type) ? p.type.ofType : p.type));
    if (objects.length) {
      arbs.push({ weight: 2, arbitrary: fc.record({ anonymous, place: fc.constantFrom(...objects), key: fc.oneof(fc.constantFrom('__proto__', 'constructor', '', 'x', 'a.b', 'ID', 'a"b'), fc.string({ maxLength: 10 })), v: wrongValue }).map(({ anonymous: a, place, key, v }) => {
        const variables = structuredClone(base);
        at(variables, [...place.path, key], (parent, k) => define(parent, k, v));
        return { variables, anonymous: a, fault: [...place.path, key], what: `extra ${label([...place.path, key])}` };
      }) });
    }
  }
  // A variable the operation does not declare is ignored by GraphQL: sent all the same.
  arbs.push({ weight: 1, arbitrary: fc.record({ anonymous, v: wrongValue }).map(({ anonymous: a, v }) => ({ variables: { ...base, stray: v }, anonymous: a, fault: null, what: 'an undeclared variable' })) });
  return fc.oneof(...arbs);
}

/**
 * A value of the wrong type is refused by coercion, which names the exact place. A value of the
 * right type refused by the service's rules may be refused for another field it conflicts with
 * (`type: web_page` without `config.source_url`, content that does not match `fileType`): that
 * error must still name a field.
 */
function namesTheField(c: GqlCase, error: { message?: string; extensions?: { details?: Record<string, unknown> } }): boolean {
  const named = { message: error.message, details: error.extensions?.details };
  const coercion = /^Variable "\$/.test(error.message ?? '');
  // Inside an input object the name starts below the argument (`input.name` -> `name`); a list or
  // scalar argument of its own (`retryDatasources(ids)`) is named as the argument.
  if (c.fault && (namesField(label(c.fault), named) || namesField(label(c.fault.slice(c.fault.length > 1 ? 1 : 0)), named))) return true;
  return !coercion && typeof error.extensions?.details?.field === 'string';
}

describe('generated variables on every GraphQL mutation', () => {
  const tallies: string[] = [];
  afterAll(() => {
    console.log(`GraphQL fuzz, seed ${FUZZ_SEED}, ${FUZZ_RUNS} cases per mutation:\n${tallies.join('\n')}`);
  });

  for (const name of names) {
    it(name, async () => {
      const field = schema.getMutationType()!.getFields()[name]!;
      const declared = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
      const call = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
      const leaf = isScalarType(getNamedType(field.type)) || isEnumType(getNamedType(field.type));
      const document = `mutation${declared ? `(${declared})` : ''} { ${name}${call ? `(${call})` : ''} ${leaf ? '' : '{ __typename }'} }`;
      // A nested `id` (updateDocument's input.id) names the mutation's own record, as a bare one does.
      const idOf = (path: ArgPath) =>
        victims[name] && path.length === 1 && path[0] === 'id' ? '«victim»' : realId(real, name, path.at(-1) === 'id' ? ['id'] : path, () => '00000000-0000-7000-8000-000000000000');
      const base = () => ({ ...Object.fromEntries(field.args.map((a) => [a.name, valueOf(a.type, [a.name], { id: idOf })])), ...BASES[name]?.() });
      const token = SIGNED_IN.has(name) ? owner.session : owner.apiKey;
      const tally = new Tally();
      const problems: string[] = [];
      const cpu = process.cpuUsage();
      const started = performance.now();
      await fc.assert(
        fc.asyncProperty(casesFor(field, base()), async (c) => {
          // Ids of victims are read at send time: a case before may have deleted the one it was made with.
          const variables = victims[name] && c.variables.id === '«victim»' ? { ...c.variables, id: victims[name] } : c.variables;
          const before = await watch.mark();
          const res = await http('POST', `${app.url}/graphql`, { token: c.anonymous ? null : token, body: { query: document, variables } });
          const errors: { message?: string; extensions?: { code?: string; details?: Record<string, unknown> } }[] = res.body?.errors ?? [];
          const code = errors[0]?.extensions?.code;
          tally.add(code ?? String(res.status));
          const wrong =
            res.status >= 500 ? `${res.status}: ${show(res.body)}`
            : typeof res.body !== 'object' || res.body === null ? `not JSON: ${show(res.body)}`
            : errors.some((e) => !isErrorCode(e.extensions?.code) || e.extensions?.code === 'INTERNAL') ? `error without a known code: ${show(errors)}`
            : code === 'BAD_USER_INPUT' && !namesTheField(c, errors[0]!) ? `BAD_USER_INPUT does not name ${c.fault ? label(c.fault) : 'a field'}: ${show(errors[0])}`
              : null;
          const refused = errors.length > 0;
          // Only a refusal that wrote something is looked at row by row.
          const changes = refused && (await watch.mark()) !== before ? await watch.since(before) : [];
          if (changes.length) problems.push(`${c.what}${c.anonymous ? ' (anonymous)' : ''}: refused (${code}) but changed ${show(changes.slice(0, 3))}`);
          if (wrong) problems.push(`${c.what}${c.anonymous ? ' (anonymous)' : ''}: ${wrong}`);
          if (!refused) await watch.settle();
          if (!refused && victims[name]) victims[name] = await MAKE_VICTIM[name]!();
        }),
        { numRuns: FUZZ_RUNS, seed: FUZZ_SEED, endOnFailure: true },
      );
      const used = process.cpuUsage(cpu);
      tallies.push(`${name}: ${tally}, ${((performance.now() - started) / tally.cases).toFixed(1)} ms a case, ${((used.user + used.system) / 1e3 / tally.cases).toFixed(1)} ms CPU a case`);
      expect(tally.cases).toBe(FUZZ_RUNS);
      expect(problems.slice(0, 15)).toEqual([]);
    }, Math.max(60_000, FUZZ_RUNS * 400));
  }
});
