/**
 * A malformed id is the client's mistake, never the server's: every ID the schema accepts (an
 * argument, an item of a list argument, a field of an input object) and every `:param` of the
 * REST table, given "not-a-uuid" by a signed-in owner, answers NOT_FOUND (or BAD_USER_INPUT),
 * never INTERNAL or 500. Arguments stop at the schema's edge (src/graphql/id-guard.ts); IDs inside
 * input objects at the services' lookups (src/db/find.ts). The cases are generated from the
 * built schema and the route table, so a field or a route added later is covered without
 * editing this file.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from 'graphql-sse';
import { getNamedType, isCompositeType, parse, typeFromAST, type GraphQLInputType, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes, type RestRoute } from '../rest/routes.ts';
import { createSchema } from '../src/graphql/schema.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, newOrganization } from './support/client.ts';
import { createDatastore } from './support/ingest.ts';
import { argumentsOf, idPaths, realId, rootFields, valueOf, type ArgPath, type RootField } from './support/schema-walk.ts';

const BAD = 'not-a-uuid';
const ACCEPTED = ['NOT_FOUND', 'BAD_USER_INPUT'];

let app: TestApp;
let schema: GraphQLSchema;
let owner: Awaited<ReturnType<typeof newOrganization>>;
/**
 * Real records, so that an ID nested under another (a conversation in an agent query) is reached:
 * only the ID under test is malformed.
 */
const real: Record<string, string> = {};

async function must(query: string, variables: Record<string, unknown>, token = owner.session) {
  const res = await gql(app.url, query, variables, { token });
  if (!res.data) throw new Error(`${query}: ${JSON.stringify(res.errors)}`);
  return res.data;
}

beforeAll(async () => {
  schema = await createSchema();
  app = await startTestApp();
  owner = await newOrganization(app.url, 'Ids');
  real.datastore = await createDatastore(app, owner.apiKey, 'public');
  real.datasource = (await must(`mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id } }`, { i: { datastoreId: real.datastore, type: 'text', name: 'note', text: 'Ada wrote programs.' } })).createDatasource.id;
  real.agent = (await must(`mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Ids', handle: 'ids-agent', visibility: 'public', datastoreIds: [real.datastore] } })).createAgent.id;
  real.conversation = (await must(`mutation($id: ID!) { agentQuery(id: $id, input: { query: "hello" }) { conversationId } }`, { id: real.agent })).agentQuery.conversationId;
  real.form = (await must(`mutation($i: CreateFormInput!) { createForm(input: $i) { form { id } } }`, { i: { name: 'F', published: true, schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } })).createForm.form.id;
  real.apiKey = (await must(`{ apiKeys { id } }`, {})).apiKeys[0].id;
}, 120_000);
afterAll(() => app?.close());

interface Case {
  root: RootField;
  path: ArgPath;
}

function cases(): Case[] {
  return rootFields(schema).flatMap((root) => idPaths(root.field.args).map((path) => ({ root, path })));
}

const same = (a: ArgPath, b: ArgPath) => a.length === b.length && a.every((p, i) => p === b[i]);

function request({ root, path }: Case) {
  const { defs, uses, variables } = argumentsOf(root.field.args, {
    include: path,
    id: (at) => (same(at, path) ? BAD : realId(real, root.field.name, at, randomUUID)),
  });
  const selection = isCompositeType(getNamedType(root.field.type)) ? '{ __typename }' : '';
  const query = `${root.operation} Case${defs.length ? `(${defs.join(', ')})` : ''} { ${root.field.name}(${uses.join(', ')}) ${selection} }`;
  return { query, variables };
}

/** The errors of a subscription: what its first result carries, or how the stream failed. */
async function subscribe(query: string, variables: Record<string, unknown>): Promise<{ codes: string[]; data: unknown }> {
  const client = createClient({ url: `${app.url}/graphql/stream`, headers: { authorization: `Bearer ${owner.session}` }, retryAttempts: 0 });
  const events = client.iterate({ query, variables });
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 10 s')), 10_000));
  try {
    const first = await Promise.race([events.next(), timeout]);
    const result = first.value as { errors?: { extensions?: { code?: string } }[]; data?: unknown } | undefined;
    return { codes: (result?.errors ?? []).map((e) => String(e.extensions?.code)), data: result?.data ?? null };
  } catch (err) {
    // graphql-sse rejects with the HTTP response when the server refuses before streaming.
    const body = err instanceof Response ? ((await err.json().catch(() => null)) as { error?: { code?: string } } | null) : null;
    return { codes: [String(body?.error?.code ?? (err as Error).message)], data: null };
  } finally {
    await events.return?.();
    client.dispose();
  }
}

describe('every ID the schema accepts, given "not-a-uuid"', () => {
  it('the schema has ID arguments to walk (the walk itself works)', () => {
    const names = cases().map((c) => `${c.root.field.name}:${c.path.join('.')}`);
    // Two known ones, in each place an ID can be: an argument, a list item, an input field.
    expect(names).toEqual(expect.arrayContaining(['agent:id', 'updateAgent:input.datastoreIds.0', 'agentQuery:input.conversationId', 'revokeApiKey:id']));
  });

  it('answers NOT_FOUND or BAD_USER_INPUT, never INTERNAL, on every Query, Mutation and Subscription field', async () => {
    const failures: string[] = [];
    for (const c of cases()) {
      const { query, variables } = request(c);
      const label = `${c.root.operation} ${c.root.field.name}(${c.path.join('.')})`;
      let codes: string[];
      let data: unknown;
      if (c.root.operation === 'subscription') ({ codes, data } = await subscribe(query, variables));
      else {
        const res = await gql(app.url, query, variables, { token: owner.session });
        codes = (res.errors ?? []).map((e) => e.extensions.code);
        data = res.data?.[c.root.field.name] ?? null;
        if (res.status >= 500) codes.push(`HTTP ${res.status}`);
      }
      if (codes.length === 0) failures.push(`${label}: accepted it (${JSON.stringify(data)})`);
      else if (!codes.every((code) => ACCEPTED.includes(code))) failures.push(`${label}: ${codes.join(', ')}`);
    }
    expect(failures.join('\n')).toBe('');
  }, 120_000);
});

describe('an agent named by its @handle', () => {
  it('is still found where an ID is taken: read, asked (any case), over GraphQL and REST', async () => {
    expect((await must(`query($id: ID!) { agent(id: $id) { id } }`, { id: '@ids-agent' })).agent.id).toBe(real.agent);
    expect((await must(`mutation($id: ID!) { agentQuery(id: $id, input: { query: "hello" }) { conversationId } }`, { id: '@IDS-Agent' })).agentQuery.conversationId).toBeTruthy();
    const rest = await fetch(`${app.api}/agents/@ids-agent`);
    expect(rest.status).toBe(200);
    expect(((await rest.json()) as { id: string }).id).toBe(real.agent);
  });
});

/** A body that would pass validation, so the request reaches the lookup of its path's id. */
function restBody(route: RestRoute): string | FormData | undefined {
  if (route.body === 'stream') return 'hello';
  if (route.body === 'multipart') {
    const form = new FormData();
    form.append('file', new Blob(['Ada wrote programs.'], { type: 'text/plain' }), 'note.txt');
    return form;
  }
  if (route.method === 'GET' || route.method === 'DELETE') return undefined;
  // The row's own variables say where the body goes: the variable that receives it whole gets a
  // minimal value of its input type; a required one it does not fill is read from the body by name.
  const operation = parse(route.document).definitions[0] as OperationDefinitionNode;
  const sentinel = {};
  const params = Object.fromEntries([...route.path.matchAll(/:(\w+)/g)].map((m) => [m[1], BAD]));
  const given = route.variables({ params, query: new URLSearchParams(), body: sentinel });
  let body: Record<string, unknown> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type as never) as GraphQLInputType;
    const id = () => BAD;
    if (given[name] === sentinel) body = { ...body, ...(valueOf(type, [name], { id }) as object) };
    else if (given[name] === undefined && definition.type.kind === 'NonNullType') body[name] = valueOf(type, [name], { id });
  }
  return JSON.stringify(body);
}

describe('every REST path parameter, given "not-a-uuid"', () => {
  const withParams = routes.filter((r) => r.path.includes(':'));

  it('the table has rows with path parameters', () => {
    expect(withParams.length).toBeGreaterThan(5);
  });

  it.each(withParams.map((r) => [`${r.method} ${r.path}`, r] as const))('%s answers 404 or 400, never 500', async (_label, route) => {
    const url = `${route.root ? app.url : app.api}${route.path.replace(/:\w+/g, BAD)}`;
    const body = restBody(route);
    const headers: Record<string, string> = { authorization: `Bearer ${owner.apiKey}` };
    if (typeof body === 'string' && route.body === 'json') headers['content-type'] = 'application/json';
    const res = await fetch(url, { method: route.method, headers, body });
    const json = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
    // An upload link's token is the credential itself: a made-up one is a refused link (403).
    const expected = route.access === 'link' ? [400, 403, 404] : [400, 404];
    expect(expected, `${res.status} ${JSON.stringify(json)}`).toContain(res.status);
    expect(json?.error?.code).toBeTruthy();
  });
});
