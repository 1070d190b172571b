/**
 * The error table is one table for both transports: each code gives the same HTTP status
 * over REST and the same extensions.code over GraphQL, with a JSON body on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, AppError, errorBody, statusOf, type ErrorCode } from '../src/errors.ts';
import { normalizeError } from '../src/graphql/errors.ts';
import { gql, http, newOrganization, type GqlResult, type HttpResult } from './support/client.ts';
import { fileBodyLimit } from '../src/http/body.ts';
import { startTestApp, type TestApp } from './support/app.ts';

let app: TestApp;
let own: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
let publicAgent: string;
let privateAgent: string;

const UPDATE = `mutation($id: ID!, $input: UpdateAgentInput!) { updateAgent(id: $id, input: $input) { id } }`;

beforeAll(async () => {
  app = await startTestApp();
  own = await newOrganization(app.url, 'Own');
  other = await newOrganization(app.url, 'Other');
  const create = async (visibility: string, handle: string) =>
    (await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'A', visibility, handle } }, { token: own.apiKey })).data.createAgent.id as string;
  publicAgent = await create('public', 'errors-public');
  privateAgent = await create('private', 'errors-private');
});
afterAll(() => app?.close());

/** For each code, a real request over each transport that a client can cause. */
const triggers: Partial<Record<ErrorCode, { rest: () => Promise<HttpResult>; graphql: () => Promise<GqlResult> }>> = {
  BAD_USER_INPUT: {
    rest: () => http('PATCH', `${app.api}/agents/${privateAgent}`, { token: own.apiKey, body: { description: 'x', temperature: 2 } }),
    graphql: () => gql(app.url, UPDATE, { id: privateAgent, input: { description: 'x', temperature: 2 } }, { token: own.apiKey }),
  },
  UNAUTHENTICATED: {
    rest: () => http('PATCH', `${app.api}/agents/${privateAgent}`, { body: { description: 'x' } }),
    graphql: () => gql(app.url, UPDATE, { id: privateAgent, input: { description: 'x' } }),
  },
  FORBIDDEN: {
    rest: () => http('PATCH', `${app.api}/agents/${publicAgent}`, { token: other.apiKey, body: { description: 'x' } }),
    graphql: () => gql(app.url, UPDATE, { id: publicAgent, input: { description: 'x' } }, { token: other.apiKey }),
  },
  NOT_FOUND: {
    rest: () => http('GET', `${app.api}/agents/${privateAgent}`, { token: other.apiKey }),
    graphql: () => gql(app.url, `query($id: ID!) { agent(id: $id) { id } }`, { id: privateAgent }, { token: other.apiKey }),
  },
  CONFLICT: {
    rest: () => http('PATCH', `${app.api}/agents/${privateAgent}`, { token: own.apiKey, body: { description: 'x', handle: 'errors-public' } }),
    graphql: () => gql(app.url, UPDATE, { id: privateAgent, input: { description: 'x', handle: 'errors-public' } }, { token: own.apiKey }),
  },
  PAYLOAD_TOO_LARGE: {
    rest: () => http('PATCH', `${app.api}/agents/${privateAgent}`, { token: own.apiKey, body: { description: 'x'.repeat(2_000_000) } }),
    // GraphQL bodies may carry a base64 file of the upload cap (universalProcess): its limit is that much larger.
    graphql: () => gql(app.url, UPDATE, { id: privateAgent, input: { description: 'x'.repeat(fileBodyLimit(app.config.uploadMaxBytes, app.config.jsonBodyLimitBytes) + 1) } }, { token: own.apiKey }),
  },
  UNSUPPORTED_MEDIA_TYPE: {
    rest: () => http('PATCH', `${app.api}/agents/${privateAgent}`, { token: own.apiKey, body: { description: 'x' }, headers: { 'content-type': 'application/json; charset=iso-2022-kr' } }),
    graphql: async () => {
      const res = await http('POST', `${app.url}/graphql`, { token: own.apiKey, body: { query: '{ __typename }' }, headers: { 'content-type': 'application/json; charset=iso-2022-kr' } });
      return { status: res.status, headers: res.headers, ...res.body };
    },
  },
  RATE_LIMITED: {
    // Sign-in is GraphQL only; the REST half of this code is proven by the renderer test below.
    rest: async () => ({ status: 429, headers: new Headers(), body: errorBody('RATE_LIMITED', 'see renderer test') }),
    graphql: async () => {
      let res: GqlResult = { status: 0, headers: new Headers() };
      for (let i = 0; i < 11; i++) res = await gql(app.url, `mutation { login(input: { email: "${other.email}", password: "wrong-wrong" }) { token } }`);
      return res;
    },
  },
};

describe('each error code over REST and GraphQL', () => {
  it.each(Object.keys(triggers) as ErrorCode[])('%s', async (code) => {
    const t = triggers[code]!;
    const rest = await t.rest();
    expect(rest.status, JSON.stringify(rest.body)).toBe(ERROR_CODES[code].status);
    expect(rest.body.error.code).toBe(code);
    expect(typeof rest.body.error.message).toBe('string');
    const graphql = await t.graphql();
    expect(graphql.errors?.[0]?.extensions.code, JSON.stringify(graphql)).toBe(code);
  });

  it('a failure of our own is INTERNAL on both, without internals', async () => {
    const broken = await startTestApp();
    const org = await newOrganization(broken.url, 'Broken');
    // The database loses a table under a running server: every agent read fails inside.
    await broken.db.orm.em.getConnection().execute('drop table agents cascade');
    const rest = await http('GET', `${broken.api}/agents/@anything`);
    const graphql = await gql(broken.url, `{ agents { nodes { id } } }`, {}, { token: org.apiKey });
    await broken.close().catch(() => {});
    expect(rest.status).toBe(500);
    // The request's id, which the log line of the cause carries too: what a user quotes to an operator.
    const requestId = rest.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(rest.body).toEqual({ error: { code: 'INTERNAL', message: 'Internal error.', details: { requestId } } });
    expect(graphql.errors?.[0]?.extensions.code).toBe('INTERNAL');
    expect(graphql.errors?.[0]?.extensions.details).toEqual({ requestId: graphql.headers.get('x-request-id') });
    expect(graphql.errors?.[0]?.message).toBe('Internal error.');
    expect(JSON.stringify(graphql)).not.toMatch(/stack|pglite|mikro/i);
    expect(org.apiKey).toBeTruthy();
  });
});

describe('a field the input type does not have', () => {
  // graphql-js quotes the name as it was sent: one holding quotes, dots or the message's own words
  // (found by the fuzz test's seed 435006320) must still come back whole, and nothing is changed.
  it.each(['!".', 'a" is not defined by type "Z', 'nme'])('is named in details.field: %j', async (name) => {
    const r = await gql(app.url, UPDATE, { id: privateAgent, input: { description: 'renamed?', [name]: 1 } }, { token: own.apiKey });
    expect(r.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(r.errors?.[0]?.extensions.details).toMatchObject({ field: name });
    const read = await gql(app.url, `query($id: ID!) { agent(id: $id) { description } }`, { id: privateAgent }, { token: own.apiKey });
    expect(read.data.agent.description).not.toBe('renamed?');
  });
});

describe('the renderer both transports share', () => {
  it.each(Object.keys(ERROR_CODES) as ErrorCode[])('%s keeps its code and status', (code) => {
    const { error, internal } = normalizeError(new AppError(code, 'msg', { field: 'f' }));
    expect(error.code).toBe(code);
    expect(internal).toBe(false);
    expect(statusOf(error.code)).toBe(ERROR_CODES[code].status);
    expect(errorBody(error.code, error.message, error.details)).toEqual({ error: { code, message: 'msg', details: { field: 'f' } } });
    expect(error.extensions.code).toBe(code);
  });

  it('anything unexpected becomes INTERNAL and is flagged for the log', () => {
    const { error, internal } = normalizeError(new TypeError('x is undefined'));
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toBe('Internal error.');
    expect(internal).toBe(true);
  });
});
