/**
 * Generated inputs for every REST row (issue 16, item 2): FUZZ_RUNS cases per row (1,000 by
 * default), bodies generated from the row's OpenAPI request schema, valid-ish and broken in one
 * place each (a field missing, added, of the wrong type, a huge number, a NaN-like string, odd
 * Unicode, JSON nested thousands deep), broken as a whole (not JSON, truncated, the wrong content
 * type, a multipart body cut short) and with bad path parameters. Every answer: no 5xx; a 4xx is
 * the JSON error of the table and a 400 names the field at fault; a refused request changes no
 * row of any table. Requests come from the owner's full-scope key, some anonymous or with a bad
 * token. The service runs with ROLE=api, so no worker writes rows while the cases run.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, isErrorCode, type ErrorCode } from '../src/errors.ts';
import { createSchema } from '../src/graphql/schema.ts';
import { buildOpenApi, type OpenApiDocument } from '../rest/openapi.ts';
import { routes, type RestRoute } from '../rest/routes.ts';
import type { JsonSchema } from '../rest/json-schema.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { FUZZ_RUNS, FUZZ_SEED, Tally, badIds, deepText, namesField, oddNumber, oddString, show, watchRows, wrongValue, type RowWatch } from './support/fuzz.ts';
import { recordResponse } from './support/openapi-check.ts';
import { createDatastore } from './support/ingest.ts';

let app: TestApp;
let watch: RowWatch;
let openapi: OpenApiDocument;
let owner: Awaited<ReturnType<typeof newOrganization>>;
/** The records the cases name, by placeholder; replaced at send time (a deleted agent is made again). */
const fixtures: Record<string, string> = {};

const AGENT = `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`;
const newAgent = async (name: string, handle?: string) =>
  (await gql(app.url, AGENT, { i: { name, visibility: 'public', handle, datastoreIds: [fixtures.store] } }, { token: owner.apiKey })).data.createAgent.id as string;

/** The token of a new upload link (a link takes one file). */
async function freshToken() {
  const link = await http('POST', `${app.api}/external/datastores/file-upload/generate-link/${fixtures.store}`, { token: owner.apiKey, body: { type: 'text/plain', fileName: 'b.txt' } });
  return new URL(link.body.link).pathname.split('/').at(-1)!;
}

beforeAll(async () => {
  app = await startTestApp({
    ROLE: 'api',
    RATE_LIMIT_IP_PER_MINUTE: '1000000',
    RATE_LIMIT_VISITOR_PER_MINUTE: '100000',
    DEFAULT_MONTHLY_QUERY_LIMIT: '1000000000',
  });
  openapi = buildOpenApi({ schema: await createSchema(), routes, basePath: app.config.restBasePath });
  owner = await newOrganization(app.url, 'Fuzz');
  fixtures.store = await createDatastore(app, owner.apiKey, 'private');
  fixtures.publicStore = await createDatastore(app, owner.apiKey, 'public');
  fixtures.agent = await newAgent('Fuzzed', 'fuzzed');
  fixtures.victim = await newAgent('Victim');
  const text = await http('POST', `${app.api}/datasources`, { token: owner.apiKey, body: { datastoreId: fixtures.store, type: 'text', name: 'doc', text: 'The ferry leaves at nine.' } });
  fixtures.document = text.body.id;
  const link = await http('POST', `${app.api}/external/datastores/file-upload/generate-link/${fixtures.store}`, { token: owner.apiKey, body: { type: 'text/plain', fileName: 'a.txt' } });
  fixtures.upload = link.body.id;
  fixtures.token = await freshToken();
  expect((await fetch(link.body.link, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'hello' })).status).toBe(200);
  const form = await gql(app.url, `mutation($i: CreateFormInput!) { createForm(input: $i) { form { id } } }`, {
    i: { name: 'F', published: true, schema: { type: 'object', properties: { email: { type: 'string', format: 'email' } }, required: ['email'] } },
  }, { token: owner.apiKey });
  fixtures.form = form.data.createForm.form.id;
  fixtures.conversation = (await http('POST', `${app.api}/agents/${fixtures.agent}/query`, { token: owner.apiKey, body: { query: 'When does the ferry leave?' } })).body.conversationId;
  // Rows that move whatever the request: the rate counters count refused requests on purpose, and
  // a key's last use is written at most once a minute by whichever request comes.
  watch = await watchRows(app, { skip: ['rate_counters'], ignore: { api_keys: ['last_used_at'] } });
}, 120_000);
afterAll(async () => {
  await watch?.close();
  await app?.close();
});

/** A valid request per row, the starting point of its cases: placeholders `«name»` are fixtures. */
interface Base {
  params: Record<string, string>;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
  /** Multipart rows: the text fields (the file part is added). */
  fields?: Record<string, string>;
}

const BASES: Record<string, Base> = {
  'POST /datastores/:id/query': { params: { id: '«store»' }, body: { query: 'When does the ferry leave?' } },
  'POST /agents/:id/query': { params: { id: '«agent»' }, body: { query: 'When does the ferry leave?' } },
  'POST /agents/:id/universal': { params: { id: '«agent»' }, body: { fileBuffer: Buffer.from('The ferry leaves at nine.').toString('base64'), fileType: 'txt' } },
  'POST /forms/:formId/chat': { params: { formId: '«form»' }, body: { query: 'grace@example.org' } },
  'GET /conversations/:id': { params: { id: '«conversation»' }, query: { limit: '10' } },
  'POST /external/datastores/file-upload/generate-link/:id': { params: { id: '«store»' }, body: { type: 'text/plain', fileName: 'notes.txt' } },
  'POST /external/datastores/file-upload/process/:id': { params: { id: '«store»' }, body: { id: '«upload»' } },
  'POST /external/datastores/update/:id': { params: { id: '«store»' }, body: { id: '«document»', text: 'The ferry leaves at ten.' } },
  'POST /datastores/update/:id': { params: { id: '«store»' }, body: { id: '«document»', text: 'The ferry leaves at eleven.' } },
  'POST /external/datastores/file-upload/:id multipart': { params: { id: '«store»' }, fields: { custom_id: 'c1', fileName: 'n.txt' } },
  'POST /datasources multipart': { params: {}, fields: { type: 'file', datastoreId: '«store»' } },
  'POST /datasources json': { params: {}, body: { datastoreId: '«store»', type: 'text', name: 'fuzzed', text: 'Tickets are sold on board.' } },
  'GET /agents/:id': { params: { id: '«agent»' } },
  'PATCH /agents/:id': { params: { id: '«agent»' }, body: { description: 'An agent under test.' } },
  'DELETE /agents/:id': { params: { id: '«victim»' }, body: {} },
  'PUT /uploads/:token stream': { params: { token: '«token»' } },
};

const rowKey = (r: RestRoute) => `${r.method} ${r.path}${r.body === 'multipart' ? ' multipart' : r.body === 'stream' ? ' stream' : r.path === '/datasources' ? ' json' : ''}`;

/** Body fields named like the records they point to get a fixture, so a valid-ish body reaches the service. */
const ID_FIELDS: Record<string, string> = { datastoreId: '«store»', conversationId: '«conversation»', datasource_ids: '«document»', datastoreIds: '«store»' };

function resolve(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/«(\w+)»/g, (_, name: string) => fixtures[name] ?? name);
  if (Array.isArray(value)) return value.map(resolve);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: resolve(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

/** A value the schema accepts, or nearly: strings and numbers inside their limits, enums, short arrays. */
function validish(schema: JsonSchema | undefined, name: string): fc.Arbitrary<unknown> {
  const s = (schema ?? {}) as Record<string, any>;
  const id = ID_FIELDS[name];
  if (id) return s.type === 'array' || (Array.isArray(s.type) && s.type.includes('array')) ? fc.constant([id]) : fc.constant(id);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  const types: string[] = [s.type ?? 'string'].flat();
  const type = types.find((t) => t !== 'null') ?? 'null';
  switch (type) {
    case 'string':
      return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 24, 24) });
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1000, max: s.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(validish(s.items, name), { maxLength: 3 });
    case 'object': {
      if (!s.properties) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
      const model = Object.fromEntries(Object.entries(s.properties as Record<string, JsonSchema>).map(([k, v]) => [k, validish(v, k)]));
      return fc.record(model, { requiredKeys: s.required ?? [] });
    }
    default:
      return fc.constant(null);
  }
}

/** Every place in a JSON value: [] is the value itself. */
function paths(value: unknown, prefix: (string | number)[] = [], depth = 0): (string | number)[][] {
  const out = [prefix];
  if (depth > 3 || !value || typeof value !== 'object') return out;
  for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, Array.isArray(value) ? Number(k) : k], depth + 1));
  return out;
}

/** `filters.custom_ids[0]`; an empty key is shown as `""`, as the service names it. */
const restName = (path: (string | number)[]) => path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${p === '' ? '""' : p}`)).join('');

function setAt(root: unknown, path: (string | number)[], fn: (parent: any, key: string | number) => void) {
  let node: any = root;
  for (const p of path.slice(0, -1)) node = node[p];
  fn(node, path.at(-1)!);
}

const clone = <T>(v: T): T => structuredClone(v);
const define = (obj: any, key: string | number, value: unknown) => Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });

type Token = 'owner' | 'none' | 'bogus';
interface RestCase {
  token: Token;
  params: Record<string, string>;
  query: Record<string, string>;
  body: { kind: 'json'; value: unknown } | { kind: 'raw'; contentType: string; text: string } | { kind: 'multipart'; contentType: string; data: Buffer } | { kind: 'bytes'; contentType: string; data: Buffer } | { kind: 'none' };
  /** The REST name of the field at fault (a 400 must name it); null when the body as a whole is at fault. */
  fault: string | null;
  what: string;
}

const token = fc.constantFrom<Token>('owner', 'owner', 'owner', 'owner', 'owner', 'owner', 'owner', 'owner', 'none', 'bogus');
const contentTypes = fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/xml', '', 'APPLICATION/JSON', 'application/json, text/plain', 'multipart/form-data; boundary=zz');

/** Whole-body faults of a JSON row: not JSON, cut short, not an object, nested too deep, the wrong content type. */
function bodyFaults(base: Record<string, unknown>) {
  const json = JSON.stringify(base);
  return fc.oneof(
    fc.nat({ max: Math.max(0, json.length - 1) }).map((n) => ({ kind: 'raw' as const, contentType: 'application/json', text: json.slice(0, n), what: `cut at ${n}` })),
    fc.constantFrom('', '{', 'nul', '{"a":1,}', '\ufeff{}', "{'a':1}", '{"a":1}{"b":2}', '[]', '1', '"text"', 'null', 'true', '-0', '1e309', 'NaN').map((text) => ({ kind: 'raw' as const, contentType: 'application/json', text, what: 'not an object' })),
    fc.constantFrom(1000, 5000, 20_000).chain((d) => fc.constantFrom<'array' | 'object'>('array', 'object').map((k) => ({ kind: 'raw' as const, contentType: 'application/json', text: deepText(d, k), what: `${k} ${d} deep` }))),
    contentTypes.map((contentType) => ({ kind: 'raw' as const, contentType, text: json, what: `content type ${contentType}` })),
  );
}

/** The places a schema describes: each property, the properties of its objects, the first item of its arrays. */
function schemaPaths(schema: JsonSchema | undefined, prefix: (string | number)[] = [], depth = 0): (string | number)[][] {
  const s = (schema ?? {}) as Record<string, any>;
  if (depth > 3) return [];
  const out: (string | number)[][] = [];
  for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)) out.push([...prefix, k], ...schemaPaths(v, [...prefix, k], depth + 1));
  if (s.items) out.push([...prefix, 0], ...schemaPaths(s.items, [...prefix, 0], depth + 1));
  return out;
}

const has = (root: unknown, path: (string | number)[]) => {
  let node: any = root;
  for (const p of path) {
    if (!node || typeof node !== 'object' || !Object.hasOwn(node, p)) return false;
    node = node[p];
  }
  return true;
};

/**
 * One field of a valid body broken (the rest left valid, so a 400 can only be about that field):
 * missing, added, of the wrong type, odd text, an odd number, nested too deep. The field is one
 * the body has or one the schema describes (made, with the objects that hold it, when absent).
 */
function fieldFault(value: Record<string, unknown>, described: (string | number)[][], choice: { pick: number; mode: string; wrong: unknown; key: string }) {
  const body = clone(value);
  const seen = new Set<string>();
  const places = [...paths(body).slice(1), ...described].filter((p) => !seen.has(JSON.stringify(p)) && seen.add(JSON.stringify(p)));
  if (choice.mode === 'extra' || !places.length) {
    const objects = paths(body).filter((p) => {
      let node: any = body;
      for (const k of p) node = node[k];
      return node && typeof node === 'object' && !Array.isArray(node);
    });
    const at = objects[choice.pick % objects.length]!;
    let node: any = body;
    for (const k of at) node = node[k];
    define(node, choice.key, choice.wrong);
    return { body, fault: restName([...at, choice.key]), what: `extra ${restName([...at, choice.key])}` };
  }
  const at = places[choice.pick % places.length]!;
  if (choice.mode === 'drop' && has(body, at)) {
    setAt(body, at, (parent, key) => (Array.isArray(parent) ? parent.splice(Number(key), 1) : delete parent[key]));
    return { body, fault: restName(at), what: `without ${restName(at)}` };
  }
  let node: any = body;
  at.slice(0, -1).forEach((k, i) => {
    if (!has(node, [k])) define(node, k, typeof at[i + 1] === 'number' ? [] : {});
    node = node[k];
  });
  define(node, at.at(-1)!, choice.wrong);
  return { body, fault: restName(at), what: `${restName(at)} = ${show(choice.wrong, 80)}` };
}

const faultChoice = fc.record({
  pick: fc.nat(),
  mode: fc.constantFrom('drop', 'extra', 'set', 'set', 'set'),
  wrong: fc.oneof(wrongValue, oddString, oddNumber),
  key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', '', 'x', 'a.b', '$where', 'ID', 'query '), fc.string({ maxLength: 12 })),
});

function jsonCases(route: RestRoute, base: Base): fc.Arbitrary<RestCase> {
  const op = (openapi.paths[route.path.replace(/:([A-Za-z]+)/g, '{$1}')] as any)?.[route.method.toLowerCase()];
  const schema = op?.requestBody?.content?.['application/json']?.schema as JsonSchema | undefined;
  const body = base.body ? validish(schema, '').map((generated) => ({ ...(generated as object), ...base.body })) : fc.constant(undefined);
  const params = pathFaults(base);
  const described = schemaPaths(schema);
  const valid = fc.record({ token, body, params: fc.constant(base.params), query: queryCases(base) }).map(
    (c): RestCase => ({ token: c.token, params: c.params, query: c.query.query, body: c.body === undefined ? { kind: 'none' } : { kind: 'json', value: c.body }, fault: c.query.fault, what: c.query.fault ? `query ${c.query.fault}` : 'valid-ish' }),
  );
  // An accepted file is read in a worker (a tenth of a second or more each): its row is held mostly to refusals.
  const heavy = route.carriesFile ? 4 : 1;
  const arbs: fc.WeightedArbitrary<RestCase>[] = [
    { weight: heavy > 1 ? 1 : 2, arbitrary: valid },
    { weight: 2, arbitrary: fc.record({ token, params }).map((c): RestCase => ({ token: c.token, params: c.params.params, query: base.query ?? {}, body: base.body ? { kind: 'json', value: base.body } : { kind: 'none' }, fault: c.params.fault, what: `path ${c.params.fault} = ${c.params.params[c.params.fault]}` })) },
  ];
  if (base.body) {
    arbs.push({
      weight: 5 * heavy,
      arbitrary: fc.record({ token, choice: faultChoice }).map((c): RestCase => {
        const f = fieldFault(base.body!, described, c.choice);
        return { token: c.token, params: base.params, query: {}, body: { kind: 'json', value: f.body }, fault: f.fault, what: f.what };
      }),
    });
    arbs.push({ weight: 2, arbitrary: fc.record({ token, f: bodyFaults(base.body) }).map((c): RestCase => ({ token: c.token, params: base.params, query: {}, body: { kind: 'raw', contentType: c.f.contentType, text: c.f.text }, fault: null, what: c.f.what })) });
  }
  return fc.oneof(...arbs);
}

function queryCases(base: Base): fc.Arbitrary<{ query: Record<string, string>; fault: string | null }> {
  if (!base.query) return fc.constant({ query: {}, fault: null });
  return fc.oneof(
    fc.constant({ query: base.query, fault: null }),
    fc.record({ limit: fc.oneof(fc.constantFrom('-1', '0', '1e309', 'NaN', 'Infinity', '1.5', '99999999999', 'abc', '', '0x10', ' 5'), fc.integer().map(String)) }).map((q) => ({ query: q, fault: 'limit' })),
    fc.record({ cursor: oddString }).map((q) => ({ query: { ...base.query, ...q }, fault: 'cursor' })),
  );
}

function pathFaults(base: Base): fc.Arbitrary<{ params: Record<string, string>; fault: string }> {
  const names = Object.keys(base.params);
  if (!names.length) return fc.constant({ params: {}, fault: 'path' });
  return fc.record({ name: fc.constantFrom(...names), bad: fc.oneof(badIds, fc.constantFrom('«agent»', '«store»', '«form»', '«document»', '«conversation»')) }).map(({ name, bad }) => ({ params: { ...base.params, [name]: bad }, fault: name }));
}

const BOUNDARY = 'fuzzBoundary7MA4YWxk';
function multipart(fields: [string, string][], file: { name?: string; filename?: string; type?: string; data?: string } | null): Buffer {
  const parts = fields.map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  if (file) parts.push(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${file.name ?? 'file'}"; filename="${file.filename ?? 'notes.txt'}"\r\nContent-Type: ${file.type ?? 'text/plain'}\r\n\r\n${file.data ?? 'The ferry leaves at nine.'}\r\n`);
  return Buffer.from(`${parts.join('')}--${BOUNDARY}--\r\n`);
}

function multipartCases(base: Base): fc.Arbitrary<RestCase> {
  const ct = `multipart/form-data; boundary=${BOUNDARY}`;
  const fields = Object.entries(base.fields!);
  const whole = multipart(fields, {});
  const mk = (t: Token, data: Buffer, fault: string | null, what: string, contentType = ct): RestCase => ({ token: t, params: base.params, query: {}, body: { kind: 'multipart', contentType, data }, fault, what });
  return fc.oneof(
    { weight: 2, arbitrary: token.map((t) => mk(t, whole, null, 'valid')) },
    { weight: 2, arbitrary: fc.record({ t: token, params: pathFaults(base) }).map(({ t, params }) => ({ ...mk(t, whole, params.fault, `path ${params.fault}`), params: params.params })) },
    { weight: 3, arbitrary: fc.record({ t: token, cut: fc.nat({ max: whole.length - 1 }) }).map(({ t, cut }) => mk(t, whole.subarray(0, cut), null, `cut at ${cut} of ${whole.length}`)) },
    // A text field with odd text (or missing), an unknown field, a file part missing or odd.
    {
      weight: 4,
      arbitrary: fc.record({ t: token, i: fc.nat(), v: oddString }).map(({ t, i, v }) => {
        const [name] = fields[i % fields.length]!;
        return mk(t, multipart(fields.map(([k, old]) => [k, k === name ? String(v) : old]), {}), name, `${name} = ${show(v, 60)}`);
      }),
    },
    { weight: 1, arbitrary: fc.record({ t: token, i: fc.nat() }).map(({ t, i }) => {
      const [name] = fields[i % fields.length]!;
      return mk(t, multipart(fields.filter(([k]) => k !== name), {}), name, `without ${name}`);
    }) },
    { weight: 1, arbitrary: fc.record({ t: token, k: fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !/["\r\n]/.test(k)) }).map(({ t, k }) => mk(t, multipart([...fields, [k, 'x']], {}), k, `extra ${k}`)) },
    { weight: 1, arbitrary: token.map((t) => mk(t, multipart(fields, null), 'file', 'no file part')) },
    {
      weight: 2,
      arbitrary: fc.record({ t: token, filename: fc.oneof(fc.constantFrom('', '.', '../../x', 'a\u0000b', 'x'.repeat(5000), 'ä.txt'), fc.string({ maxLength: 20 }).filter((s) => !/["\r\n]/.test(s))), type: fc.constantFrom('text/plain', '', 'application/x-msdownload', 'image/png', 'text/html; charset=x'), data: fc.constantFrom('', '\u0000\u0001', '%PDF-1.7 broken', 'PK\u0003\u0004 not a zip') })
        .map(({ t, filename, type, data }) =>
          // A control character or a name past the header limit breaks the part's header: the body as a whole is refused.
          mk(t, multipart(fields, { filename, type, data }), /[\u0000-\u001f]/.test(filename) || filename.length > 1000 ? null : 'file', `file ${show({ filename, type, data }, 80)}`),
        ),
    },
    { weight: 1, arbitrary: fc.record({ t: token, ct: fc.constantFrom('multipart/form-data', 'multipart/form-data; boundary=other', 'multipart/form-data; boundary=', 'multipart/form-data; boundary="' + BOUNDARY + '"; charset=utf-16') }).map(({ t, ct: c }) => mk(t, whole, null, `content type ${c}`, c)) },
    { weight: 1, arbitrary: token.map((t) => mk(t, Buffer.from(JSON.stringify(base.fields)), null, 'JSON in a multipart body')) },
  );
}

function uploadLinkCases(base: Base): fc.Arbitrary<RestCase> {
  const bytes = (t: Token, contentType: string, data: Buffer, what: string, params = base.params, fault: string | null = null): RestCase => ({ token: t, params, query: {}, body: { kind: 'bytes', contentType, data }, fault, what });
  return fc.oneof(
    token.map((t) => bytes(t, 'text/plain', Buffer.from('The ferry leaves at noon.'), 'valid')),
    fc.record({ t: token, ct: fc.constantFrom('application/json', '', 'image/png', 'text/plain; charset=utf-16', 'multipart/form-data; boundary=x') }).map(({ t, ct }) => bytes(t, ct, Buffer.from('hello'), `content type ${ct}`)),
    token.map((t) => bytes(t, 'text/plain', Buffer.alloc(0), 'empty')),
    fc.record({ t: token, params: pathFaults(base) }).map(({ t, params }) => bytes(t, 'text/plain', Buffer.from('x'), `token ${params.params.token}`, params.params, params.fault)),
    fc.record({ t: token, cut: fc.nat({ max: 200 }), flip: fc.nat({ max: 200 }) }).map(({ t, cut, flip }) => bytes(t, 'text/plain', Buffer.from('x'), `token mangled ${cut}/${flip}`, { token: `«token»~${cut}~${flip}` }, 'token')),
  );
}

/** The mangled token of a case: cut short, or with one character changed. */
function mangle(tokenText: string, cut: number, flip: number): string {
  if (cut % 2) return tokenText.slice(0, cut % tokenText.length);
  const i = flip % tokenText.length;
  return tokenText.slice(0, i) + (tokenText[i] === 'A' ? 'B' : 'A') + tokenText.slice(i + 1);
}

function casesFor(route: RestRoute, base: Base): fc.Arbitrary<RestCase> {
  if (route.body === 'multipart') return multipartCases(base);
  if (route.body === 'stream') return uploadLinkCases(base);
  return jsonCases(route, base);
}

interface Answer {
  status: number;
  body: any;
  contentType: string;
  /** Past Node's 16 KiB header limit the request is refused before any route reads it. */
  longUrl?: boolean;
  /** A path parameter that is a dot segment (`..`, `%2e%2e`): the client resolves the URL to another path, so the row never sees it. */
  elsewhere?: boolean;
}

async function send(route: RestRoute, c: RestCase): Promise<Answer> {
  let path = route.path;
  let elsewhere = false;
  for (const [name, raw] of Object.entries(c.params)) {
    let value = resolve(raw) as string;
    const mangled = /^(.*)~(\d+)~(\d+)$/.exec(value);
    if (mangled) value = mangle(mangled[1]!, Number(mangled[2]), Number(mangled[3]));
    if (/^(\.|%2e){1,2}$/i.test(value)) elsewhere = true;
    path = path.replace(`:${name}`, value);
  }
  const qs = new URLSearchParams(resolve(c.query) as Record<string, string>).toString();
  const url = `${route.root ? app.url : app.api}${path}${qs ? `?${qs}` : ''}`;
  const auth = c.token === 'owner' ? owner.apiKey : c.token === 'bogus' ? 'ab_live_not-a-real-key' : null;
  if (c.body.kind === 'json' || c.body.kind === 'none' || c.body.kind === 'raw') {
    const opts = c.body.kind === 'json' ? { body: resolve(c.body.value) } : c.body.kind === 'raw' ? { rawBody: c.body.text, headers: { 'content-type': c.body.contentType } } : {};
    const res = await http(route.method, url, { token: auth, ...opts });
    return { status: res.status, body: res.body, contentType: res.headers.get('content-type') ?? '', longUrl: url.length > 16_000, elsewhere };
  }
  const data = c.body.kind === 'multipart' ? Buffer.from(resolve(c.body.data.toString('utf8')) as string, 'utf8') : c.body.data;
  const headers: Record<string, string> = { 'content-type': c.body.contentType };
  if (auth) headers.authorization = `Bearer ${auth}`;
  const res = await fetch(url, { method: route.method, headers, body: data });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* checked below: a 4xx must be JSON */
  }
  if (body !== text) recordResponse({ method: route.method, url, status: res.status, body });
  return { status: res.status, body, contentType: res.headers.get('content-type') ?? '', elsewhere };
}

/** What is wrong with an answer, or null. */
function problem(route: RestRoute, c: RestCase, res: Answer): string | null {
  if (res.status >= 500) return `${res.status}: ${show(res.body)}`;
  if (res.status < 400) return null;
  if (!/^application\/json/.test(res.contentType)) return `${res.status} is not JSON (${res.contentType}): ${show(res.body)}`;
  const error = res.body?.error;
  if (!error || !isErrorCode(error.code) || typeof error.message !== 'string' || !error.message) return `${res.status} without the error body: ${show(res.body)}`;
  if (ERROR_CODES[error.code as ErrorCode].status !== res.status) return `${res.status} with code ${error.code}`;
  if (route.failure && res.body.success !== false && !res.longUrl && !res.elsewhere) return `${res.status} without success: false`;
  const fault = res.longUrl ? null : c.fault;
  // A refusal of one field must say which; a body refused as a whole has no field to name.
  // A value of the right type refused by a rule between fields (a file whose content does not
  // match its fileType) names the field of the rule, with the rule's reason (as GraphQL's check).
  const ruleNamed = typeof error.details?.field === 'string' && typeof error.details?.reason === 'string';
  if (res.status === 400 && fault && fault !== 'path' && !namesField(fault, error) && !ruleNamed) return `400 does not name ${fault}: ${show(error)}`;
  if (res.status === 400 && !fault && c.what === 'valid-ish' && typeof error.details?.field !== 'string') return `400 names no field: ${show(error)}`;
  return null;
}

describe('generated requests on every REST row', () => {
  const tallies: string[] = [];
  afterAll(() => {
    console.log(`REST fuzz, seed ${FUZZ_SEED}, ${FUZZ_RUNS} cases per row:\n${tallies.join('\n')}`);
  });

  it('has a starting request for each row', () => {
    expect(routes.map(rowKey).filter((k) => !BASES[k])).toEqual([]);
  });

  for (const route of routes) {
    const key = rowKey(route);
    it(key, async () => {
      const base = BASES[key];
      expect(base, `a starting request for ${key} in BASES`).toBeDefined();
      const tally = new Tally();
      const problems: string[] = [];
      const cpu = process.cpuUsage();
      const started = performance.now();
      const slow: [number, string][] = [];
      await fc.assert(
        fc.asyncProperty(casesFor(route, base!), async (c) => {
          const before = await watch.mark();
          const sent = performance.now();
          const res = await send(route, c);
          slow.push([performance.now() - sent, `${c.what} ${res.status}`]);
          tally.add(String(res.status));
          const wrong = problem(route, c, res);
          // Only a refusal that wrote something is looked at row by row.
          const changes = res.status >= 400 && (await watch.mark()) !== before ? await watch.since(before) : [];
          if (changes.length) problems.push(`${c.what} (${c.token}): refused ${res.status} but changed ${show(changes.slice(0, 3))}`);
          if (wrong) problems.push(`${c.what} (${c.token}): ${wrong}`);
          if (res.status < 300) await watch.settle();
          if (res.status < 300 && route.method === 'DELETE') fixtures.victim = await newAgent('Victim');
          // A link takes one file.
          if (res.status < 300 && route.body === 'stream') fixtures.token = await freshToken();
        }),
        { numRuns: FUZZ_RUNS, seed: FUZZ_SEED, endOnFailure: true },
      );
      const used = process.cpuUsage(cpu);
      slow.sort((a, b) => b[0] - a[0]);
      tallies.push(`${key}: ${tally}, ${((performance.now() - started) / tally.cases).toFixed(1)} ms a case, ${((used.user + used.system) / 1e3 / tally.cases).toFixed(1)} ms CPU a case; slowest ${slow.slice(0, 3).map(([ms, w]) => `${ms.toFixed(0)} ms ${show(w, 60)}`).join(' | ')}`);
      expect(tally.cases).toBe(FUZZ_RUNS);
      expect(problems.slice(0, 15)).toEqual([]);
    }, Math.max(60_000, FUZZ_RUNS * 400));
  }
});

/** Each a bug the generated cases found, kept as the request that showed it. */
describe('found by the generated cases', () => {
  it('answers a universal-processor request of the wrong content type with its own error body (success: false)', async () => {
    const res = await http('POST', `${app.api}/agents/${fixtures.agent}/universal`, { token: owner.apiKey, rawBody: '{}', headers: { 'content-type': 'multipart/form-data; boundary=zz' } });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ success: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
  });

  it('names an unknown body field whose name holds a quote, a "; " or nothing at all', async () => {
    const path = `${app.api}/external/datastores/file-upload/generate-link/${fixtures.store}`;
    for (const key of ['say "hi"', 'a; b', '']) {
      const res = await http('POST', path, { token: owner.apiKey, body: { type: 'text/plain', [key]: 1 } });
      expect({ key, status: res.status }).toEqual({ key, status: 400 });
      expect(res.body.error.details.field).toBe(key === '' ? '""' : key);
      expect(res.body.error.message).toContain('is not a known field');
    }
    // A string value holding "; " or ` at "` does not hide which field is wrong.
    const res = await http('POST', path, { token: owner.apiKey, body: { type: 7, fileName: 'x; String cannot represent at "input.fileName"' } });
    expect(res.body.error).toMatchObject({ message: 'type must be a string.', details: { field: 'type' } });
  });

  it('names the path parameter the client wrote, not the GraphQL variable behind it', async () => {
    for (const [path, param] of [[`/agents/%00/universal`, 'id'], [`/external/datastores/update/%00`, 'id'], [`/forms/%00/chat`, 'formId']] as const) {
      const body = path.includes('universal') ? { fileBuffer: 'aGVsbG8=', fileType: 'txt' } : path.includes('update') ? { id: fixtures.document, text: 't' } : { query: 'q' };
      const res = await http('POST', `${app.api}${path}`, { token: owner.apiKey, body });
      expect({ path, status: res.status, field: res.body.error.details?.field }).toEqual({ path, status: 400, field: param });
      expect(res.body.error.message).toMatch(new RegExp(`^${param} `));
    }
  });

  it('answers a request line and headers over the limit with the JSON error, not an empty page', async () => {
    const res = await http('GET', `${app.api}/conversations/${fixtures.conversation}?cursor=${'x'.repeat(40_000)}`, { token: owner.apiKey });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.error).toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringContaining('too large') });
  });
});
