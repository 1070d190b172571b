/**
 * Every field a dashboard can select reads without an error: one record of every kind is made
 * (the mutations that make them select every field of what they return), then every Query field
 * is asked for every field of its type, recursively, as the owner. The selection sets come from
 * the built schema, so a field added later is read here without editing this file; a type that
 * Query can reach but no record here produces is named as a failure, so fixtures keep up.
 */
import { randomUUID } from 'node:crypto';
import { isNonNullType, type GraphQLSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchema } from '../src/graphql/schema.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, type GqlResult } from './support/client.ts';
import { settled } from './support/ingest.ts';
import { argumentsOf, realId, reachableObjectTypes, selectionOf, typenames, type ArgPath } from './support/schema-walk.ts';

/** Deep enough for Query -> conversation -> messages -> nodes -> fields, and me -> organization -> fields. */
const DEPTH = 4;

let app: TestApp;
let schema: GraphQLSchema;
let session: string;
const real: Record<string, string> = {};
/** Every object type some response held, by __typename. */
const seen = new Set<string>();

const idOf = (field: string) => (path: ArgPath) => realId(real, field, path, randomUUID);

/**
 * Runs one root field with `variables` for its own arguments, selecting every field under it.
 * Throws on any error, naming the field: a fixture that fails is no place to go on from.
 */
async function run(operation: 'query' | 'mutation', field: string, given: Record<string, unknown> = {}, token: string | null = session): Promise<GqlResult> {
  const root = operation === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
  const definition = root.getFields()[field];
  if (!definition) throw new Error(`no ${operation} field ${field}`);
  const defs: string[] = [];
  const variables: Record<string, unknown> = {};
  const uses: string[] = [];
  for (const arg of definition.args) {
    if (arg.name in given) {
      defs.push(`$${arg.name}: ${arg.type.toString()}`);
      uses.push(`${arg.name}: $${arg.name}`);
      variables[arg.name] = given[arg.name];
    }
  }
  const rest = argumentsOf(definition.args.filter((a) => !(a.name in given)), { id: idOf(field) }, 'r');
  defs.push(...rest.defs);
  uses.push(...rest.uses);
  Object.assign(variables, rest.variables);
  const selection = selectionOf(definition.type, DEPTH, schema, { id: idOf(field), defs, variables });
  const document = `${operation} Read${defs.length ? `(${defs.join(', ')})` : ''} { ${field}${uses.length ? `(${uses.join(', ')})` : ''} ${selection} }`;
  const res = await gql(app.url, document, variables, { token });
  typenames(res.data, seen);
  return res;
}

async function must(operation: 'query' | 'mutation', field: string, given: Record<string, unknown> = {}, token: string | null = session) {
  const res = await run(operation, field, given, token);
  if (res.errors || !res.data?.[field]) throw new Error(`${operation} ${field}: ${JSON.stringify(res.errors)}`);
  return res.data[field];
}

beforeAll(async () => {
  schema = await createSchema();
  app = await startTestApp();
  const email = `reader-${Date.now()}@example.test`;
  const signedUp = await must('mutation', 'signUp', { input: { email, password: 'correct horse battery', organizationName: 'Readers' } }, null);
  session = signedUp.token;
  real.organization = signedUp.organization.id;
  real.apiKey = (await must('mutation', 'createApiKey', { input: { name: 'reader' } })).apiKey.id;
  real.datastore = (await must('mutation', 'createDatastore', { input: { name: 'Notes', visibility: 'private' } })).id;
  real.datasource = (await must('mutation', 'createDatasource', { input: { datastoreId: real.datastore, type: 'text', name: 'note.txt', text: 'Ada Lovelace wrote the first program for the Analytical Engine.' } })).id;
  expect((await settled(app, session, real.datasource)).status).toBe('synched');
  // A file too: its size and MIME type are set (a text document's may not be).
  await must('mutation', 'createUploadLink', { datastoreId: real.datastore, input: { type: 'text/plain', fileName: 'upload.txt' } });
  // A failed one (a refused address), which datasourceProblems lists with its reason.
  const refused = (await must('mutation', 'createDatasource', { input: { datastoreId: real.datastore, type: 'web_page', config: { source_url: 'http://127.0.0.1:9/' } } })).id;
  expect((await settled(app, session, refused)).status).toBe('error');
  real.agent = (await must('mutation', 'createAgent', { input: { name: 'Reader', handle: 'reader', visibility: 'public', datastoreIds: [real.datastore] } })).id;
  const answer = await must('mutation', 'agentQuery', { id: real.agent, input: { query: 'Who wrote the first program?' } });
  real.conversation = answer.conversationId;
  real.message = answer.messageId;
  real.form = (await must('mutation', 'createForm', { input: { name: 'Contact', published: true, schema: { type: 'object', properties: { name: { type: 'string', title: 'Your name' } }, required: ['name'] } } })).form.id;
  const chat = await must('mutation', 'formChat', { formId: real.form, input: { query: 'Hello' } });
  await must('mutation', 'formChat', { formId: real.form, input: { query: 'Ada Lovelace', conversationId: chat.conversationId, visitorId: chat.visitorId } });
}, 120_000);
afterAll(() => app?.close());

describe('every field of every type, read back', () => {
  it('every Query field answers with every field selected, without an error', async () => {
    const failures: string[] = [];
    for (const field of Object.values(schema.getQueryType()!.getFields())) {
      const res = await run('query', field.name);
      for (const error of res.errors ?? []) failures.push(`${field.name} ${error.path?.join('.') ?? ''}: ${error.extensions.code} ${error.message}`);
      if (!res.errors && isNonNullType(field.type) && res.data?.[field.name] == null) failures.push(`${field.name}: no data`);
    }
    expect(failures.join('\n')).toBe('');
  }, 120_000);

  it('every object type that Query reaches was read from a real record', async () => {
    // Types only the list queries reach are read through them, so run them all first.
    for (const field of Object.values(schema.getQueryType()!.getFields())) await run('query', field.name);
    const reachable = reachableObjectTypes(schema, Object.values(schema.getQueryType()!.getFields()).map((f) => f.type));
    const unread = [...reachable].filter((name) => !seen.has(name));
    expect(unread, 'make a record of these types in beforeAll').toEqual([]);
    // The records themselves, so an empty list cannot pass for a read.
    for (const name of ['Agent', 'ApiKey', 'Conversation', 'Datasource', 'Datastore', 'Form', 'FormSubmission', 'Me', 'Message', 'Organization', 'QueryResult', 'User']) {
      expect(seen, name).toContain(name);
    }
  }, 120_000);
});
