/**
 * The typed client cannot rot: the committed examples/gql/ is what GraphQL Code Generator makes
 * of schema.graphql and the example's operations today, and the example itself runs against a
 * real server (list agents over fetch, stream an answer over graphql-sse).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generate } from '@graphql-codegen/cli';
import type { Types } from '@graphql-codegen/plugin-helpers';
import { afterAll, beforeAll, expect, it } from 'vitest';
import config from '../codegen.ts';
import { listAndAsk } from '../examples/typed-client.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { waitFor } from './support/wait.ts';

const root = path.resolve(import.meta.dirname, '..');

it("examples/gql/ and the console's console/src/gql/ are what `npm run codegen` generates from schema.graphql (run it after changing either)", async () => {
  const files = (await generate({ ...config, cwd: root, silent: true }, false)) as Types.FileOutput[];
  expect(files.map((f) => path.relative(root, path.resolve(root, f.filename))).sort()).toEqual([
    'console/src/gql/gql.ts',
    'console/src/gql/graphql.ts',
    'console/src/gql/index.ts',
    'examples/gql/gql.ts',
    'examples/gql/graphql.ts',
    'examples/gql/index.ts',
  ]);
  for (const file of files) expect(readFileSync(path.resolve(root, file.filename), 'utf8'), file.filename).toBe(file.content);
}, 60_000);

it("docs/client.md quotes the example's operations and its fetch helper as they are", () => {
  const example = readFileSync(path.join(root, 'examples/typed-client.ts'), 'utf8');
  const blocks = [...readFileSync(path.join(root, 'docs/client.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  // The first two blocks are verbatim (the imports, less the example's own, then the operations; the helper); the stream is abridged.
  const [operations, helper] = blocks;
  for (const line of operations!.split('\n').filter((l) => l.trim())) expect(example).toContain(line);
  expect(example).toContain(operations!.slice(operations!.indexOf('const ListAgents')));
  expect(example).toContain(helper);
});

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
}, 60_000);

afterAll(async () => {
  await app?.close();
});

it('the typed example lists the agents and streams an answer from a real server', async () => {
  const org = await newOrganization(app.url, 'Typed');
  const store = (await gql(app.url, `mutation { createDatastore(input: { name: "Help" }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
  const doc = await http('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'text', name: 'hours', text: 'The help desk is open from nine to five, Monday to Friday.' } });
  expect(doc.status, JSON.stringify(doc.body)).toBe(200);
  await waitFor(async () => (await gql(app.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id: doc.body.id }, { token: org.apiKey })).data?.datasource.status === 'synched', 60_000, 'the document synched');
  const agent = (await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Desk', datastoreIds: [store] } }, { token: org.apiKey })).data.createAgent.id;

  const pieces: string[] = [];
  const result = await listAndAsk(app.url, org.apiKey, 'When is the help desk open?', (text) => pieces.push(text));
  expect(result.agents).toEqual([{ id: agent, name: 'Desk', visibility: 'private' }]);
  expect(pieces.length).toBeGreaterThan(0);
  expect(result.answer).toBe(pieces.join(''));
  expect(result.answer).toContain('nine to five');
  expect(result.sources).toContain('hours');
  // The conversation it made is readable with the id the stream handed back.
  const conversation = await gql(app.url, `query($id: ID!) { conversation(id: $id) { messages(first: 10) { nodes { from text } } } }`, { id: result.conversationId });
  expect(conversation.data.conversation.messages.nodes.map((m: { from: string }) => m.from).sort()).toEqual(['agent', 'human']);
}, 90_000);

it('the example reports a refused request as an error, not as an empty result', async () => {
  await expect(listAndAsk(app.url, 'not-a-key', 'hello')).rejects.toThrow(/UNAUTHENTICATED/);
});
