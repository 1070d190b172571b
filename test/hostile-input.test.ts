/**
 * What an attacker can send without breaking anything (issue 20): multipart bodies cut short at
 * every boundary and inside every part, and text PostgreSQL cannot store (a NUL character, a lone
 * UTF-16 surrogate) in every REST row and every GraphQL argument. Each is a 4xx JSON error that
 * changes nothing, and the service keeps answering.
 */
import net from 'node:net';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchema } from '../src/graphql/schema.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { createDatastore, sql } from './support/ingest.ts';

let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let privateStore: string;
let publicStore: string;
let agentId: string;
let conversationId: string;

beforeAll(async () => {
  app = await startTestApp();
  org = await newOrganization(app.url, 'Hostile');
  privateStore = await createDatastore(app, org.apiKey, 'private');
  publicStore = await createDatastore(app, org.apiKey, 'public');
  agentId = (await gql(app.url, `mutation($d: [ID!]) { createAgent(input: { name: "A", handle: "hostile", visibility: public, datastoreIds: $d }) { id } }`, { d: [privateStore] }, { token: org.apiKey })).data
    .createAgent.id;
  conversationId = (await http('POST', `${app.api}/agents/${agentId}/query`, { token: org.apiKey, body: { query: 'When does the ferry leave?' } })).body.conversationId;
});
afterAll(async () => {
  await app?.close();
});

const datasourceCount = async () => Number((await sql<{ n: string }>(app, 'select count(*) as n from datasources'))[0]!.n);

/** Sends `head` + `body` over a raw socket and returns the status line's code and the body. */
function rawRequest(port: number, head: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
    socket.write(head);
    socket.end(body);
  });
}

describe('multipart bodies cut short', () => {
  const boundary = 'xXcutXx';
  const multipart = (fields: Record<string, string | undefined>) =>
    Buffer.from(
      [
        ...Object.entries(fields).filter(([, v]) => v !== undefined).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`),
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\n`,
        'The ferry leaves at nine. Tickets are sold on board.\r\n',
        `--${boundary}--\r\n`,
      ].join(''),
    );

  /** Every offset that starts a boundary line, the middle of each part, and a cut inside a boundary. */
  function cuts(body: Buffer): number[] {
    const marks: number[] = [];
    for (let at = body.indexOf(`--${boundary}`); at !== -1; at = body.indexOf(`--${boundary}`, at + 1)) marks.push(at);
    const points = new Set<number>([1]);
    marks.forEach((at, i) => {
      points.add(at);
      points.add(at + 4); // inside the boundary itself
      const next = marks[i + 1];
      if (next !== undefined) points.add(Math.floor((at + next) / 2)); // inside the part
    });
    points.add(body.length - 3); // all but the closing "--\r\n"
    return [...points].filter((p) => p > 0 && p < body.length).sort((a, b) => a - b);
  }

  const routes = () => [
    { name: 'direct upload (endpoint 5), with a key', path: `/external/datastores/file-upload/${privateStore}`, token: org.apiKey, fields: { custom_id: 'c1', fileName: 'n.txt' } },
    { name: 'create datasource (endpoint 6), with a key', path: '/datasources', token: org.apiKey, fields: { datastoreId: privateStore, type: 'file', custom_id: 'c3' } },
  ];

  it('answers 400 for a body cut at every part boundary and inside every part, stores nothing, and keeps serving', async () => {
    const before = await datasourceCount();
    const restPath = new URL(app.api).pathname;
    for (const route of routes()) {
      const body = multipart(route.fields);
      for (const cut of cuts(body)) {
        const part = body.subarray(0, cut);
        // Chunked: the HTTP request ends cleanly, the multipart body inside it does not.
        const head =
          `POST ${restPath}${route.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nTransfer-Encoding: chunked\r\n` +
          (route.token ? `Authorization: Bearer ${route.token}\r\n` : '') +
          '\r\n';
        const chunked = Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n0\r\n\r\n')]);
        const res = await rawRequest(app.port, head, chunked);
        expect({ route: route.name, cut, status: res.status }).toEqual({ route: route.name, cut, status: 400 });
        expect(JSON.parse(res.text).error.code).toBe('BAD_USER_INPUT');
      }
      // The whole body still works: the cuts above were the only problem.
      const whole = body;
      const ok = await fetch(`${app.api}${route.path}`, {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...(route.token ? { authorization: `Bearer ${route.token}` } : {}) },
        body: whole,
      });
      expect(ok.status).toBe(200);
      await ok.text();
    }
    expect(await datasourceCount()).toBe(before + routes().length);
    expect((await http('GET', `${app.url}/healthz`)).status).toBe(200);
  });

  it('survives clients that hang up in the middle of a multipart body', async () => {
    const restPath = new URL(app.api).pathname;
    for (const route of routes()) {
      const body = multipart(route.fields);
      for (const cut of cuts(body)) {
        await new Promise<void>((resolve) => {
          const socket = net.connect(app.port, '127.0.0.1', () => {
            socket.write(
              `POST ${restPath}${route.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
                `Content-Length: ${body.length}\r\n${route.token ? `Authorization: Bearer ${route.token}\r\n` : ''}\r\n`,
            );
            socket.write(body.subarray(0, cut), () => setTimeout(() => socket.destroy(), 5));
          });
          socket.on('error', () => {});
          socket.on('close', () => resolve());
        });
      }
    }
    expect((await http('GET', `${app.url}/healthz`)).status).toBe(200);
    const res = await gql(app.url, `{ datastore(id: "${privateStore}") { id } }`, {}, { token: org.apiKey });
    expect(res.data?.datastore.id).toBe(privateStore);
  });
});

/** Strings PostgreSQL refuses: a NUL character, lone surrogates of either half. */
const BAD = ['a\u0000b', '\udfff\ud800', 'x\ud800'];

describe('text that cannot be stored, on every REST row', () => {
  /** The text as a path segment: UTF-8 percent-encoding, or for a lone surrogate the bytes a careless client sends (no valid UTF-8). */
  const segment = (text: string) =>
    [...text].map((ch) => (/[\ud800-\udfff]/.test(ch) ? [...Buffer.from([0xed, 0xa0 | ((ch.charCodeAt(0) >> 6) & 0x1f), 0x80 | (ch.charCodeAt(0) & 0x3f)])].map((b) => `%${b.toString(16).toUpperCase()}`).join('') : encodeURIComponent(ch))).join('');
  const rows = (bad: string) => [
    { name: 'generate upload link', method: 'POST', path: `/external/datastores/file-upload/generate-link/${privateStore}`, body: { fileName: bad, type: 'text/plain' }, field: 'fileName' },
    { name: 'process upload', method: 'POST', path: `/external/datastores/file-upload/process/${privateStore}`, body: { id: bad }, field: 'id' },
    { name: 'update document: text', method: 'POST', path: `/external/datastores/update/${privateStore}`, body: { id: '00000000-0000-7000-8000-000000000000', text: bad }, field: 'text' },
    { name: 'update document: metadata', method: 'POST', path: `/datastores/update/${privateStore}`, body: { id: '00000000-0000-7000-8000-000000000000', text: 'ok', metadata: { note: bad } }, field: 'metadata.note' },
    { name: 'datastore query', method: 'POST', path: `/datastores/${privateStore}/query`, body: { query: bad }, field: 'query' },
    { name: 'datastore query: custom_ids filter', method: 'POST', path: `/datastores/${privateStore}/query`, body: { query: 'ferry', filters: { custom_ids: [bad] } }, field: 'filters.custom_ids[0]' },
    { name: 'create text datasource', method: 'POST', path: '/datasources', body: { datastoreId: privateStore, type: 'text', name: 'n', text: bad }, field: 'text' },
    { name: 'create datasource: custom_id', method: 'POST', path: '/datasources', body: { datastoreId: privateStore, type: 'text', name: 'n', text: 'ok', custom_id: bad }, field: 'custom_id' },
    { name: 'agent query', method: 'POST', path: `/agents/${agentId}/query`, body: { query: bad }, field: 'query' },
    { name: 'agent query, streamed', method: 'POST', path: `/agents/${agentId}/query`, body: { query: bad, streaming: true }, field: 'query' },
    { name: 'agent query: visitorId', method: 'POST', path: `/agents/${agentId}/query`, body: { query: 'hi', visitorId: bad }, field: 'visitorId' },
    { name: 'universal processor', method: 'POST', path: `/agents/${agentId}/universal`, body: { fileBuffer: 'aGVsbG8=', fileType: 'txt', fileName: bad }, field: 'fileName' },
    { name: 'form chat', method: 'POST', path: `/forms/00000000-0000-7000-8000-000000000000/chat`, body: { query: bad }, field: 'query' },
    { name: 'get agent by handle', method: 'GET', path: `/agents/${segment(`@a${bad}`)}`, body: undefined, field: 'id' },
    { name: 'update agent by handle', method: 'PATCH', path: `/agents/${segment(`@a${bad}`)}`, body: { name: 'n', description: 'd' }, field: 'id' },
    { name: 'update agent: name', method: 'PATCH', path: `/agents/${agentId}`, body: { name: bad, description: 'd' }, field: 'name' },
    { name: 'delete agent by handle', method: 'DELETE', path: `/agents/${segment(`@a${bad}`)}`, body: {}, field: 'id' },
    { name: 'conversation id', method: 'GET', path: `/conversations/${segment(bad)}`, body: undefined, field: 'id' },
    { name: 'conversation cursor', method: 'GET', path: `/conversations/${conversationId}?cursor=${segment(bad)}`, body: undefined, field: 'cursor' },
  ];

  for (const bad of BAD) {
    it(`refuses ${JSON.stringify(bad)} with a 400 naming the field, and changes nothing`, async () => {
      const before = await datasourceCount();
      for (const row of rows(bad)) {
        const res = await http(row.method, `${app.api}${row.path}`, { token: org.apiKey, body: row.body });
        expect({ row: row.name, status: res.status }).toEqual({ row: row.name, status: 400 });
        expect(res.body.error.code).toBe('BAD_USER_INPUT');
        if (row.field) expect({ row: row.name, field: res.body.error.details?.field }).toEqual({ row: row.name, field: row.field });
      }
      expect(await datasourceCount()).toBe(before);
      const agent = await http('GET', `${app.api}/agents/${agentId}`, { token: org.apiKey });
      expect(agent.body.name).toBe('A');
    });
  }

  it('refuses such text in the text fields of a multipart upload', async () => {
    const before = await datasourceCount();
    // A browser's FormData turns lone surrogates into U+FFFD (and busboy does the same with bytes
    // that are not UTF-8), so only the NUL character reaches the service through a multipart body.
    for (const bad of [BAD[0]!]) {
      for (const [field, fields] of [
        ['custom_id', { custom_id: bad }],
        ['fileName', { fileName: bad }],
      ] as const) {
        const form = new FormData();
        for (const [k, v] of Object.entries(fields)) form.append(k, v);
        form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'hello.txt');
        const res = await fetch(`${app.api}/external/datastores/file-upload/${privateStore}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${org.apiKey}` } });
        const body = (await res.json()) as { error?: { code: string; details?: { field?: string } } };
        expect({ field, status: res.status, code: body.error?.code }).toEqual({ field, status: 400, code: 'BAD_USER_INPUT' });
        expect(body.error?.details?.field).toBe(field);
      }
    }
    expect(await datasourceCount()).toBe(before);
  });
});

/**
 * Every argument of every query and mutation, generated from the schema: a NUL in each string
 * position in turn (other arguments minimal and valid) answers BAD_USER_INPUT, never INTERNAL.
 */
describe('text that cannot be stored, in every GraphQL argument', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await createSchema();
  });

  /** A minimal valid value of `type`; `poison` puts BAD text at the string leaf numbered `target`. */
  function valueOf(type: GraphQLInputType, state: { leaf: number; target: number }, depth = 0): unknown {
    if (isNonNullType(type)) return valueOf(type.ofType, state, depth);
    if (isListType(type)) return [valueOf(type.ofType, state, depth)];
    const named = getNamedType(type);
    if (isEnumType(named)) return named.getValues()[0]!.value;
    if (isInputObjectType(named)) {
      const out: Record<string, unknown> = {};
      for (const field of Object.values(named.getFields())) {
        // Required fields, and optional strings (each a place the poison can go).
        const required = isNonNullType(field.type) && field.defaultValue === undefined;
        const stringy = isScalarType(getNamedType(field.type)) && ['String', 'ID'].includes(getNamedType(field.type).name);
        if (required || (stringy && depth < 2)) out[field.name] = valueOf(field.type, state, depth + 1);
      }
      return out;
    }
    if (isScalarType(named)) {
      switch (named.name) {
        case 'String':
        case 'ID':
          return state.leaf++ === state.target ? 'a\u0000b' : named.name === 'ID' ? '00000000-0000-7000-8000-000000000000' : 'x';
        case 'Int':
        case 'Float':
          return 1;
        case 'Boolean':
          return false;
        case 'JSONObject':
          return state.leaf++ === state.target ? { note: 'a\u0000b' } : {};
        case 'DateTimeISO':
          return new Date(0).toISOString();
      }
    }
    return null;
  }

  const typeName = (type: GraphQLInputType): string => (isNonNullType(type) ? `${typeName(type.ofType)}!` : isListType(type) ? `[${typeName(type.ofType)}]` : getNamedType(type).name);

  it('answers BAD_USER_INPUT for each string position of each query and mutation argument', async () => {
    const roots = [
      ['query', schema.getQueryType()!],
      ['mutation', schema.getMutationType()!],
    ] as const;
    let tried = 0;
    for (const [kind, root] of roots) {
      for (const field of Object.values(root.getFields())) {
        if (!field.args.length) continue;
        const selection = isScalarType(getNamedType(field.type)) || isEnumType(getNamedType(field.type)) ? '' : '{ __typename }';
        const decl = field.args.map((a: GraphQLArgument) => `$${a.name}: ${typeName(a.type)}`).join(', ');
        const call = field.args.map((a: GraphQLArgument) => `${a.name}: $${a.name}`).join(', ');
        const document = `${kind}(${decl}) { ${field.name}(${call}) ${selection} }`;
        for (let target = 0; ; target++) {
          const state = { leaf: 0, target };
          const variables = Object.fromEntries(field.args.map((a) => [a.name, valueOf(a.type, state)]));
          if (target >= state.leaf) break; // every string leaf has had its turn
          const res = await gql(app.url, document, variables, { token: org.apiKey });
          tried++;
          const code = res.errors?.[0]?.extensions.code;
          expect({ field: field.name, target, code }).toEqual({ field: field.name, target, code: 'BAD_USER_INPUT' });
        }
      }
    }
    expect(tried).toBeGreaterThan(40);
    expect((await http('GET', `${app.url}/healthz`)).status).toBe(200);
  });
});

describe('bigint columns', () => {
  it('serves Datasource.size and the organization limits as numbers, read back from the database', async () => {
    const created = await http('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: privateStore, type: 'text', name: 'sized', text: 'Ninety-four bytes of text, more or less, to give this document a size worth reading back.' } });
    expect(created.status).toBe(200);
    // A fresh request reads the row from the database (the bigint arrives as text from the driver).
    const res = await gql(app.url, `query($id: ID!) { datasource(id: $id) { size } }`, { id: created.body.id }, { token: org.apiKey });
    expect(res.errors).toBeUndefined();
    expect(res.data.datasource.size).toBe(Buffer.byteLength('Ninety-four bytes of text, more or less, to give this document a size worth reading back.'));
    const login = await gql(app.url, `mutation($i: LoginInput!) { login(input: $i) { organization { storedTokenLimit monthlyQueryLimit crawlPageLimit } } }`, {
      i: { email: org.email, password: 'correct horse battery' },
    });
    expect(login.errors).toBeUndefined();
    expect(login.data.login.organization).toEqual({ storedTokenLimit: expect.any(Number), monthlyQueryLimit: expect.any(Number), crawlPageLimit: expect.any(Number) });
    expect(login.data.login.organization.storedTokenLimit).toBeGreaterThan(0);
  });
});
