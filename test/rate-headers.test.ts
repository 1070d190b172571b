/**
 * A client can pace itself: limited requests carry `RateLimit-Limit`, `RateLimit-Remaining` and
 * `RateLimit-Reset` (the budget closest to exhaustion), and every refusal carries `Retry-After`.
 * Queries of a public datastore by outsiders spend the same per-address budget as anonymous
 * questions. The limits are the defaults (30 per visitor, 120 per address, a minute); each test
 * comes from addresses of its own (X-Forwarded-For, trusted from loopback).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, http, newOrganization, type HttpResult } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { readSse, summarize } from './support/sse.ts';

let app: TestApp;
let owner: Awaited<ReturnType<typeof newOrganization>>;
let stranger: Awaited<ReturnType<typeof newOrganization>>;
let agent: string;
let store: string;
let privateStore: string;

const from = (ip: string) => ({ 'x-forwarded-for': ip });
const ask = (ip: string, visitorId: string, token?: string) => http('POST', `${app.api}/agents/${agent}/query`, { token, body: { query: 'When is the desk open?', visitorId }, headers: from(ip) });
const query = (ip: string, token?: string, id = store) => http('POST', `${app.api}/datastores/${id}/query`, { token, body: { query: 'desk hours' }, headers: from(ip) });

/** The budget a response reports, as numbers (null when the header is absent). */
function budget(res: { headers: Headers }) {
  const num = (name: string) => (res.headers.has(name) ? Number(res.headers.get(name)) : null);
  return { limit: num('ratelimit-limit'), remaining: num('ratelimit-remaining'), reset: num('ratelimit-reset') };
}

function expectResetWithinAMinute(res: { headers: Headers }) {
  const { reset } = budget(res);
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(60);
}

/** A REST refusal: 429, and the header says what the body says. */
function expectRefused(res: HttpResult) {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.body.error.code).toBe('RATE_LIMITED');
  const wait = res.body.error.details.retryAfterSeconds;
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(60);
  expect(res.headers.get('retry-after')).toBe(String(wait));
  expect(budget(res).remaining).toBe(0);
}

beforeAll(async () => {
  app = await startTestApp();
  owner = await newOrganization(app.url, 'Owner');
  stranger = await newOrganization(app.url, 'Stranger');
  store = (await gql(app.url, `mutation { createDatastore(input: { name: "Help", visibility: public }) { id } }`, {}, { token: owner.apiKey })).data.createDatastore.id;
  privateStore = (await gql(app.url, `mutation { createDatastore(input: { name: "Inside", visibility: private }) { id } }`, {}, { token: owner.apiKey })).data.createDatastore.id;
  const text = await http('POST', `${app.api}/datasources`, { token: owner.apiKey, body: { datastoreId: store, type: 'text', name: 'hours', text: 'The help desk is open from nine to five, Monday to Friday.' } });
  expect(text.status, JSON.stringify(text.body)).toBe(200);
  agent = (await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Desk', visibility: 'public', datastoreIds: [store] } }, { token: owner.apiKey })).data.createAgent.id;
}, 120_000);

afterAll(async () => {
  await app?.close();
});

describe('agent questions over REST', () => {
  it("an anonymous visitor's answers carry the tighter budget (the visitor's, not the address's), shrinking with each question, streamed or not", async () => {
    const first = await ask('10.1.0.1', 'pacer');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(budget(first)).toMatchObject({ limit: 30, remaining: 29 });
    expectResetWithinAMinute(first);

    const second = await ask('10.1.0.1', 'pacer');
    expect(budget(second)).toMatchObject({ limit: 30, remaining: 28 });

    const streamed = await fetch(`${app.api}/agents/${agent}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...from('10.1.0.1') },
      body: JSON.stringify({ query: 'When is the desk open?', visitorId: 'pacer', streaming: true }),
    });
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(budget(streamed)).toMatchObject({ limit: 30, remaining: 27 });
    expect(summarize(await readSse(streamed)).last).toBe('[DONE]');
  });

  it("a visitor's 31st question of a minute is refused with Retry-After; another visitor at the address still has the address's budget", async () => {
    for (let i = 0; i < 30; i++) expect((await ask('10.1.1.1', 'eager')).status).toBe(200);
    const refused = await ask('10.1.1.1', 'eager');
    expectRefused(refused);
    expect(budget(refused).limit).toBe(30);
    expectResetWithinAMinute(refused);

    // 31 of 120 of the address are spent; a new visitor's own 30 are the tighter budget still.
    const other = await ask('10.1.1.1', 'patient');
    expect(other.status).toBe(200);
    expect(budget(other)).toMatchObject({ limit: 30, remaining: 29 });

    // A refused stream is refused before it starts: JSON, with the same headers.
    const stream = await http('POST', `${app.api}/agents/${agent}/query`, { body: { query: 'hi', visitorId: 'eager', streaming: true }, headers: from('10.1.1.1') });
    expectRefused(stream);
  }, 60_000);

  it("a burst of 130 questions at once from one address: exactly the address's 120 are answered, each with its own count", async () => {
    // Counted together (src/limits/grouped.ts), as they would have been one at a time.
    const bare = (await gql(app.url, `mutation { createAgent(input: { name: "Bare", visibility: public }) { id } }`, {}, { token: owner.apiKey })).data.createAgent.id;
    const results = await Promise.all(
      Array.from({ length: 130 }, (_, i) => http('POST', `${app.api}/agents/${bare}/query`, { body: { query: 'Anyone there?', visitorId: `burst-${i}` }, headers: from('10.9.0.1') })),
    );
    const answered = results.filter((r) => r.status === 200);
    expect(answered).toHaveLength(120);
    for (const refused of results.filter((r) => r.status !== 200)) expectRefused(refused);
    // The tighter budget shows: the address's while it has fewer than the visitor's 29 left.
    const remaining = answered.map((r) => budget(r).remaining!).sort((a, b) => a - b);
    expect(remaining).toEqual([...Array.from({ length: 29 }, (_, i) => i), ...Array.from({ length: 91 }, () => 29)]);
  });

  it('members of the owning organization are not limited and get no budget headers', async () => {
    const res = await ask('10.1.2.1', 'member', owner.apiKey);
    expect(res.status).toBe(200);
    expect(budget(res)).toEqual({ limit: null, remaining: null, reset: null });
    expect(res.headers.has('retry-after')).toBe(false);
  });
});

describe('over GraphQL', () => {
  const both = `mutation($id: ID!) {
    a: agentQuery(id: $id, input: { query: "open?", visitorId: "gql-fresh" }) { answer }
    b: agentQuery(id: $id, input: { query: "open?", visitorId: "gql-busy" }) { answer }
  }`;

  it('a response that ran several limited operations reports the tightest budget', async () => {
    const ip = '10.2.0.1';
    const one = await gql(app.url, `mutation($id: ID!) { agentQuery(id: $id, input: { query: "open?", visitorId: "gql-busy" }) { answer } }`, { id: agent }, { headers: from(ip) });
    expect(one.errors).toBeUndefined();
    expect(budget(one)).toMatchObject({ limit: 30, remaining: 29 });
    for (let i = 0; i < 4; i++) await gql(app.url, `mutation($id: ID!) { agentQuery(id: $id, input: { query: "open?", visitorId: "gql-busy" }) { answer } }`, { id: agent }, { headers: from(ip) });

    // gql-fresh has 29 left after this, gql-busy 24, the address 113: gql-busy's is the tightest.
    // Another organization's key: an anonymous operation may run only one answer (GRAPHQL_ANONYMOUS_MODEL_CALLS).
    const res = await gql(app.url, both, { id: agent }, { headers: from(ip), token: stranger.apiKey });
    expect(res.errors).toBeUndefined();
    expect(budget(res)).toMatchObject({ limit: 30, remaining: 24 });
    expectResetWithinAMinute(res);
  });

  it('a refused operation carries Retry-After, as its error says', async () => {
    const ip = '10.2.1.1';
    const op = `mutation($id: ID!) { agentQuery(id: $id, input: { query: "open?", visitorId: "gql-eager" }) { answer } }`;
    for (let i = 0; i < 30; i++) expect((await gql(app.url, op, { id: agent }, { headers: from(ip) })).errors).toBeUndefined();
    const refused = await gql(app.url, op, { id: agent }, { headers: from(ip) });
    expect(refused.errors![0]!.extensions.code).toBe('RATE_LIMITED');
    expect(refused.headers.get('retry-after')).toBe(String(refused.errors![0]!.extensions.details!.retryAfterSeconds));
    expect(budget(refused)).toMatchObject({ limit: 30, remaining: 0 });
  }, 60_000);

  it('a subscription over graphql-sse (distinct connections) carries the budget in its response head', async () => {
    const res = await fetch(`${app.url}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...from('10.2.3.1') },
      body: JSON.stringify({ query: `subscription($id: ID!) { agentQueryStream(id: $id, input: { query: "open?", visitorId: "sse" }) { type } }`, variables: { id: agent } }),
    });
    expect(res.status).toBe(200);
    expect(budget(res)).toMatchObject({ limit: 30, remaining: 29 });
    await res.text();
  });

  it('failed sign-ins report the throttle (10 in 15 minutes); a success clears it', async () => {
    const login = (password: string) => gql(app.url, `mutation($e: String!, $p: String!) { login(input: { email: $e, password: $p }) { token } }`, { e: owner.email, p: password }, { headers: from('10.2.2.1') });
    const failed = await login('wrong password');
    expect(failed.errors![0]!.extensions.code).toBe('UNAUTHENTICATED');
    expect(budget(failed)).toMatchObject({ limit: 10, remaining: 9 });
    expect(budget(failed).reset).toBeGreaterThan(14 * 60);
    const ok = await login('correct horse battery');
    expect(ok.data.login.token).toEqual(expect.any(String));
    // What remains is the address's budget of sign-ins, whatever the email (RATE_LIMIT_SIGNIN_PER_MINUTE).
    expect(budget(ok)).toMatchObject({ limit: 30, remaining: 28 });
  });
});

describe('public datastore queries', () => {
  it("an anonymous address's 121st query of a minute is refused; the budget is the address's, shared with its questions", async () => {
    const ip = '10.3.0.1';
    const first = await query(ip);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(budget(first)).toMatchObject({ limit: 120, remaining: 119 });
    expectResetWithinAMinute(first);
    for (let i = 2; i <= 119; i++) expect((await query(ip)).status).toBe(200);
    // The 120th is a question: the same budget.
    const asked = await ask(ip, 'last-one');
    expect(asked.status).toBe(200);
    expect(budget(asked)).toMatchObject({ limit: 120, remaining: 0 });

    const refused = await query(ip);
    expectRefused(refused);
    expect(budget(refused).limit).toBe(120);
    // Over GraphQL too.
    const graphql = await gql(app.url, `query($id: ID!) { datastoreQuery(id: $id, input: { query: "desk" }) { text } }`, { id: store }, { headers: from(ip) });
    expect(graphql.errors![0]!.extensions.code).toBe('RATE_LIMITED');
    expect(graphql.headers.get('retry-after')).toBe(String(graphql.errors![0]!.extensions.details!.retryAfterSeconds));

    // Another organization's key from that address is an outsider too.
    expectRefused(await query(ip, stranger.apiKey));
    // Members of the owning organization are not counted, from any address.
    const member = await query(ip, owner.apiKey);
    expect(member.status).toBe(200);
    expect(budget(member).limit).toBeNull();
    expect((await query(ip, owner.apiKey, privateStore)).status).toBe(200);
    // Another address has its own budget.
    expect(budget(await query('10.3.0.2'))).toMatchObject({ limit: 120, remaining: 119 });
  }, 120_000);

  it("another organization's key is counted against its address", async () => {
    const res = await query('10.3.1.1', stranger.apiKey);
    expect(res.status).toBe(200);
    expect(budget(res)).toMatchObject({ limit: 120, remaining: 119 });
  });

  it('a private datastore refuses outsiders (401 without a key, 404 to another organization), and the refusal spends nothing', async () => {
    const ip = '10.3.2.1';
    expect((await query(ip, undefined, privateStore)).status).toBe(401);
    expect((await query(ip, stranger.apiKey, privateStore)).status).toBe(404);
    expect(budget(await query(ip))).toMatchObject({ limit: 120, remaining: 119 });
  });
});
