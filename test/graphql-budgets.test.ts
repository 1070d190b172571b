/**
 * Request budgets of one GraphQL operation (src/graphql/budgets.ts), on /graphql and
 * /graphql/stream: what a single request may make the service do. The model endpoint is the local
 * OpenAI-compatible test server, so the embeddings a request caused can be counted.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';

let app: TestApp;
let model: OpenAiTestServer;
let owner: Awaited<ReturnType<typeof newOrganization>>;
let store: string;
let agent: string;

const embeddings = () => model.requests.filter((r) => r.path.endsWith('/embeddings')).length;
const aliased = (n: number, field: (i: number) => string) => Array.from({ length: n }, (_, i) => `a${i}: ${field(i)}`).join('\n');
/** The refusal every budget gives: BAD_USER_INPUT, naming the limit and its figure. */
function expectRefused(res: { status: number; errors?: { message: string; extensions: { code: string; details?: Record<string, unknown> } }[]; data?: unknown }, words: RegExp, setting: string) {
  expect(res.status, JSON.stringify(res)).toBe(400);
  expect(res.data ?? null).toBeNull();
  expect(res.errors).toHaveLength(1);
  expect(res.errors![0]!.extensions.code).toBe('BAD_USER_INPUT');
  expect(res.errors![0]!.message).toMatch(words);
  expect(res.errors![0]!.extensions.details).toMatchObject({ limit: setting });
}

beforeAll(async () => {
  model = await startOpenAiTestServer({ embeddingDimension: 8 });
  app = await startTestApp({ OPENAI_BASE_URL: model.url, EMBEDDING_MODEL: 'text-embedding-3-small', EMBEDDING_DIMENSION: '8', GRAPHQL_DEPTH_LIMIT: '2' });
  owner = await newOrganization(app.url, 'Budgets');
  store = (await gql(app.url, `mutation { createDatastore(input: { name: "Help", visibility: public }) { id } }`, {}, { token: owner.apiKey })).data.createDatastore.id;
  agent = (await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Desk', visibility: 'public', datastoreIds: [store] } }, { token: owner.apiKey })).data.createAgent.id;
}, 120_000);

afterAll(async () => {
  await app?.close();
  await model?.close();
});

describe('fields that embed or call a model', () => {
  it('an anonymous operation with 30 aliased datastoreQuery is refused before anything is embedded', async () => {
    const before = embeddings();
    const res = await gql(app.url, `query($id: ID!) { ${aliased(30, (i) => `datastoreQuery(id: $id, input: { query: "desk ${i}" }) { text }`)} }`, { id: store });
    // The alias budget (15) refuses it as well; the model-call limit is what an anonymous caller meets first below it.
    expect(res.status).toBe(400);
    expect(res.errors!.map((e) => e.extensions.code)).toEqual(expect.arrayContaining(['BAD_USER_INPUT']));
    expect(embeddings()).toBe(before);

    const two = await gql(app.url, `query($id: ID!) { ${aliased(2, (i) => `datastoreQuery(id: $id, input: { query: "desk ${i}" }) { text }`)} }`, { id: store });
    expectRefused(two, /without credentials may run 1 field .*this one runs 2/, 'GRAPHQL_ANONYMOUS_MODEL_CALLS');
    expect(embeddings()).toBe(before);
  });

  it('fragments and a mix of fields count too: a datastoreQuery and an answer are two', async () => {
    const before = embeddings();
    const res = await gql(
      app.url,
      `mutation($agent: ID!) { ...Ask b: agentQuery(id: $agent, input: { query: "again?" }) { answer } } fragment Ask on Mutation { agentQuery(id: $agent, input: { query: "open?" }) { answer } }`,
      { agent },
    );
    expectRefused(res, /this one runs 2/, 'GRAPHQL_ANONYMOUS_MODEL_CALLS');
    expect(embeddings()).toBe(before);
    // One is what an anonymous visitor may ask.
    const one = await gql(app.url, `query($id: ID!) { datastoreQuery(id: $id, input: { query: "desk" }) { text } }`, { id: store });
    expect(one.errors).toBeUndefined();
    expect(embeddings()).toBe(before + 1);
  });

  it('an authenticated operation may run two aliased datastoreQuery; past the cost limit it is refused, naming it', async () => {
    const two = await gql(app.url, `query($id: ID!) { ${aliased(2, (i) => `datastoreQuery(id: $id, input: { query: "hours ${i}" }) { text score }`)} }`, { id: store }, { token: owner.apiKey });
    expect(two.status).toBe(200);
    expect(two.errors).toBeUndefined();
    expect(Object.keys(two.data)).toEqual(['a0', 'a1']);

    const before = embeddings();
    const five = await gql(app.url, `query($id: ID!) { ${aliased(5, (i) => `datastoreQuery(id: $id, input: { query: "hours ${i}" }) { text }`)} }`, { id: store }, { token: owner.apiKey });
    expectRefused(five, /costs \d+; the limit is 20000 \(each field that embeds or calls a model.* costs 5000\)/, 'GRAPHQL_MAX_COST');
    expect(embeddings()).toBe(before);
  });

  it('graphql-sse applies the same budgets: refused with 400 before the stream opens', async () => {
    const res = await fetch(`${app.url}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: `subscription($id: ID!) { agentQueryStream(id: $id, input: { query: "hi" }) { ${aliased(16, () => 'text')} } }`, variables: { id: agent } }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string; details: Record<string, unknown> } };
    expect(body.error).toMatchObject({ code: 'BAD_USER_INPUT', message: 'The operation has 16 aliases; the limit is 15.', details: { limit: 'GRAPHQL_MAX_ALIASES', max: 15 } });

    const deep = await fetch(`${app.url}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: `subscription($id: ID!) { agentQueryStream(id: $id, input: { query: "hi" }) { response { sources { text } } } }`, variables: { id: agent } }),
    });
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as any).error.message).toBe('The operation is nested 3 levels deep; the limit is 2.');

    // Within the budgets, an anonymous visitor's stream of a public agent runs as before.
    const client = createClient({ url: `${app.url}/graphql/stream` });
    let final: any = null;
    for await (const event of client.iterate({ query: `subscription($id: ID!) { agentQueryStream(id: $id, input: { query: "open?" }) { type text } }`, variables: { id: agent } })) {
      expect(event.errors).toBeUndefined();
      final = (event.data as any).agentQueryStream;
    }
    client.dispose();
    expect(final.type).toBe('endpoint_response');
  });
});

describe('the shape of an operation', () => {
  it('depth: deeper than GRAPHQL_DEPTH_LIMIT is refused, naming the depth and the limit', async () => {
    const res = await gql(app.url, `query($id: ID!) { conversation(id: $id) { messages { nodes { text } } } }`, { id: 'c' }, { token: owner.apiKey });
    expectRefused(res, /^The operation is nested 3 levels deep; the limit is 2\.$/, 'GRAPHQL_DEPTH_LIMIT');
    // Fragments are followed.
    const viaFragment = await gql(app.url, `query($id: ID!) { ...C } fragment C on Query { conversation(id: $id) { messages { nodes { text } } } }`, { id: 'c' }, { token: owner.apiKey });
    expectRefused(viaFragment, /nested 3 levels deep/, 'GRAPHQL_DEPTH_LIMIT');
    expect((await gql(app.url, `{ me { organization { id } } }`, {}, { token: owner.apiKey })).errors).toBeUndefined();
  });

  it('aliases: more than GRAPHQL_MAX_ALIASES is refused, naming the count and the limit', async () => {
    const res = await gql(app.url, `{ ${aliased(16, () => 'me { via }')} }`, {}, { token: owner.apiKey });
    expectRefused(res, /^The operation has 16 aliases; the limit is 15\.$/, 'GRAPHQL_MAX_ALIASES');
    expect((await gql(app.url, `{ ${aliased(15, () => 'me { via }')} }`, {}, { token: owner.apiKey })).errors).toBeUndefined();
  });

  it('directives: more than GRAPHQL_MAX_DIRECTIVES is refused, naming the count and the limit', async () => {
    const res = await gql(app.url, `{ me { via } ${'__typename @include(if: true) '.repeat(51)} }`, {}, { token: owner.apiKey });
    expectRefused(res, /^The operation has 51 directives; the limit is 50\.$/, 'GRAPHQL_MAX_DIRECTIVES');
  });

  it('tokens: a document of more than GRAPHQL_MAX_TOKENS is refused before it is parsed whole', async () => {
    const res = await gql(app.url, `{ ${'__typename '.repeat(2500)} }`, {}, { token: owner.apiKey });
    expect(res.status).toBe(400);
    expect(res.errors![0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(res.errors![0]!.message).toBe('The operation has more than 2000 tokens; the limit is 2000.');
  });
});

describe('body size of /graphql', () => {
  it('a 3 MiB anonymous body is refused with 413 unless it is the file-carrying universalProcess', async () => {
    const before = embeddings();
    const big = 'x'.repeat(3 * 1024 * 1024);
    const res = await http('POST', `${app.url}/graphql`, { body: { query: `mutation($id: ID!, $q: String!) { agentQuery(id: $id, input: { query: $q }) { answer } }`, variables: { id: agent, q: big } } });
    expect(res.status).toBe(413);
    expect(res.body.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    expect(res.body.errors[0].message).toMatch(/larger than 1048576 bytes; only universalProcess/);
    expect(embeddings()).toBe(before);

    // The same size as a file for the universal processor (well within UPLOAD_MAX_BYTES) is read.
    const file = Buffer.from('The help desk opens at nine.\n'.repeat(80_000)); // ~2.2 MiB, ~3 MiB in base64
    const upload = await http('POST', `${app.url}/graphql`, {
      body: { query: `mutation($id: ID!, $input: UniversalInput!) { universalProcess(agentId: $id, input: $input) { success context } }`, variables: { id: agent, input: { fileBuffer: file.toString('base64'), fileType: 'txt' } } },
    });
    expect(upload.status, JSON.stringify(upload.body).slice(0, 500)).toBe(200);
    expect(upload.body.errors).toBeUndefined();
    expect(upload.body.data.universalProcess.success).toBe(true);
  }, 60_000);

  it('a body under JSON_BODY_LIMIT_BYTES is read as before, and a chunked one is held to it', async () => {
    const ok = await gql(app.url, `{ __typename }`, { unused: 'y'.repeat(900_000) });
    expect(ok.status).toBe(200);
    // No Content-Length: node's fetch sends a stream chunked.
    const payload = JSON.stringify({ query: `mutation($id: ID!, $input: UniversalInput!) { universalProcess(agentId: $id, input: $input) { success } }`, variables: { id: agent, input: { fileBuffer: 'A'.repeat(2_000_000), fileType: 'txt' } } });
    const chunked = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode(payload)), c.close()) }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
  });
});
