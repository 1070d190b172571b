/**
 * What the console's account pages read and change over GraphQL: whether sign-up is open (for a
 * signed-out visitor, without an error), the organization's members, its usage beside its plan
 * limits, renaming it; and the signed-out session check answering 200 with UNAUTHENTICATED, also
 * for a browser still holding a dead session cookie.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { waitFor } from './support/wait.ts';

let app: TestApp;
let closed: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;

beforeAll(async () => {
  [app, closed] = await Promise.all([startTestApp(), startTestApp({ SIGNUP_ENABLED: 'false' })]);
  [org, other] = await Promise.all([newOrganization(app.url, 'Usage Org'), newOrganization(app.url, 'Other Org')]);
});

afterAll(async () => {
  await Promise.all([app?.close(), closed?.close()]);
});

const USAGE = `{ me { organization { id name storedTokenLimit monthlyQueryLimit crawlPageLimit usage { period queriesThisMonth storedTokens } } } }`;

describe('serviceInfo', () => {
  it('tells a signed-out visitor whether sign-up is open, with status 200 and no error', async () => {
    const open = await gql(app.url, '{ serviceInfo { signupEnabled } }');
    expect(open.status).toBe(200);
    expect(open.errors).toBeUndefined();
    expect(open.data.serviceInfo.signupEnabled).toBe(true);
    const shut = await gql(closed.url, '{ serviceInfo { signupEnabled } }');
    expect(shut.status).toBe(200);
    expect(shut.data.serviceInfo.signupEnabled).toBe(false);
  });
});

describe('the signed-out session check', () => {
  it('answers `me` without credentials with 200 and UNAUTHENTICATED', async () => {
    const res = await gql(app.url, '{ me { via } }');
    expect(res.status).toBe(200);
    expect(res.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });

  it('treats a dead session cookie as signed out (200), while a dead Bearer token stays 401', async () => {
    const signUp = await gql(app.url, 'mutation($i: SignUpInput!) { signUp(input: $i) { token } }', {
      i: { email: `cookie.${Date.now()}@example.test`, password: 'correct horse battery', organizationName: 'Cookie' },
    });
    const token = signUp.data.signUp.token as string;
    const cookie = { cookie: `ab_session=${token}` };
    expect((await gql(app.url, '{ me { via } }', {}, { headers: cookie })).data.me.via).toBe('session');
    await gql(app.url, 'mutation { logout }', {}, { headers: cookie });
    for (const headers of [cookie, { cookie: 'ab_session=st_not-a-session' }, { cookie: 'ab_session=garbage' }]) {
      const res = await gql(app.url, '{ me { via } }', {}, { headers });
      expect(res.status, headers.cookie).toBe(200);
      expect(res.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    }
    const bearer = await gql(app.url, '{ me { via } }', {}, { token });
    expect(bearer.status).toBe(401);
    expect(bearer.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('Organization.usage', () => {
  it('starts at nothing, beside the plan limits', async () => {
    const res = await gql(app.url, USAGE, {}, { token: org.session });
    expect(res.errors).toBeUndefined();
    const o = res.data.me.organization;
    expect(o.usage).toEqual({ period: new Date().toISOString().slice(0, 7), queriesThisMonth: 0, storedTokens: 0 });
    expect(o.monthlyQueryLimit).toBeGreaterThan(0);
    expect(o.storedTokenLimit).toBeGreaterThan(0);
    expect(o.crawlPageLimit).toBeGreaterThan(0);
  });

  it('counts the questions asked and the tokens stored, for API keys too', async () => {
    const store = (await gql(app.url, 'mutation { createDatastore(input: { name: "Usage KB" }) { id } }', {}, { token: org.apiKey })).data.createDatastore.id;
    const added = await http('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'text', name: 'refunds', text: 'Refunds are paid within 30 days of a return. Keep the receipt.' } });
    expect(added.status).toBe(200);
    const synched = await waitFor(async () => {
      const ds = (await gql(app.url, 'query($id: ID!) { datasource(id: $id) { status tokenCount } }', { id: added.body.id }, { token: org.apiKey })).data?.datasource;
      return ds?.status === 'synched' ? ds : undefined;
    }, 60_000, 'the datasource');
    expect(synched.tokenCount).toBeGreaterThan(0);

    const agent = (await gql(app.url, 'mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }', { i: { name: 'Counter', datastoreIds: [store] } }, { token: org.apiKey })).data.createAgent.id;
    for (let i = 0; i < 2; i++) {
      const answer = await http('POST', `${app.api}/agents/${agent}/query`, { token: org.apiKey, body: { query: 'How long do refunds take?' } });
      expect(answer.status).toBe(200);
    }
    await app.services.limits.queries.settled();
    for (const token of [org.session, org.apiKey]) {
      const usage = (await gql(app.url, USAGE, {}, { token })).data.me.organization.usage;
      expect(usage.queriesThisMonth).toBe(2); // not 3: the query reserved ahead for the next question is not one asked
      expect(usage.storedTokens).toBe(synched.tokenCount);
    }
    // The other organization's count did not move.
    expect((await gql(app.url, USAGE, {}, { token: other.session })).data.me.organization.usage).toMatchObject({ queriesThisMonth: 0, storedTokens: 0 });
  });

  it('is null to anyone but its members, without an error', async () => {
    const signUp = await gql(app.url, 'mutation($i: SignUpInput!) { signUp(input: $i) { organization { name usage { storedTokens } } } }', {
      i: { email: `peek.${Date.now()}@example.test`, password: 'correct horse battery', organizationName: 'Peek' },
    });
    expect(signUp.errors).toBeUndefined();
    expect(signUp.data.signUp.organization).toEqual({ name: 'Peek', usage: null });
    expect((await gql(app.url, USAGE)).errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('members', () => {
  it('lists the organization’s users with role and joining date, page by page', async () => {
    const res = await gql(app.url, '{ members(first: 1) { nodes { id email role joinedAt } pageInfo { endCursor hasNextPage } } }', {}, { token: org.session });
    expect(res.errors).toBeUndefined();
    expect(res.data.members.nodes).toEqual([{ id: expect.any(String), email: org.email, role: 'owner', joinedAt: expect.any(String) }]);
    expect(Date.now() - Date.parse(res.data.members.nodes[0].joinedAt)).toBeLessThan(10 * 60_000);
    expect(res.data.members.pageInfo.hasNextPage).toBe(false);
    const next = await gql(app.url, 'query($a: String) { members(first: 10, after: $a) { nodes { id } } }', { a: res.data.members.pageInfo.endCursor }, { token: org.session });
    expect(next.data.members.nodes).toEqual([]);
    // Another organization sees its own owner only.
    const theirs = await gql(app.url, '{ members { nodes { email } } }', {}, { token: other.session });
    expect(theirs.data.members.nodes).toEqual([{ email: other.email }]);
  });

  it('answers bad pages with BAD_USER_INPUT, anonymous callers with UNAUTHENTICATED, API keys with FORBIDDEN', async () => {
    for (const [args, field] of [['first: 0', 'first'], ['first: 101', 'first'], ['after: "nope"', 'after']] as const) {
      const res = await gql(app.url, `{ members(${args}) { nodes { id } } }`, {}, { token: org.session });
      expect(res.errors?.[0]?.extensions.code, args).toBe('BAD_USER_INPUT');
      expect(JSON.stringify(res.errors?.[0]), args).toContain(field);
    }
    expect((await gql(app.url, '{ members { nodes { id } } }')).errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    expect((await gql(app.url, '{ members { nodes { id } } }', {}, { token: org.apiKey })).errors?.[0]?.extensions.code).toBe('FORBIDDEN');
  });
});

describe('updateOrganization', () => {
  const rename = (name: string, token?: string) => gql(app.url, 'mutation($n: String!) { updateOrganization(name: $n) { id name } }', { n: name }, { token });

  it('renames the caller’s own organization, trimmed', async () => {
    const res = await rename('  Renamed Org  ', other.session);
    expect(res.errors).toBeUndefined();
    expect(res.data.updateOrganization).toEqual({ id: other.organizationId, name: 'Renamed Org' });
    expect((await gql(app.url, '{ me { organization { name } } }', {}, { token: other.session })).data.me.organization.name).toBe('Renamed Org');
    expect((await gql(app.url, '{ me { organization { name } } }', {}, { token: org.session })).data.me.organization.name).toBe('Usage Org');
  });

  it('refuses a blank or long name (naming the field), anonymous callers and API keys, and changes nothing', async () => {
    for (const name of ['   ', 'x'.repeat(201)]) {
      const res = await rename(name, org.session);
      expect(res.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(res.errors?.[0]?.extensions.details?.field).toBe('name');
    }
    expect((await rename('Anon')).errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    expect((await rename('Key', org.apiKey)).errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect((await gql(app.url, '{ me { organization { name } } }', {}, { token: org.session })).data.me.organization.name).toBe('Usage Org');
  });
});
