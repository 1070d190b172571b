/** Each GraphQL operation of the foundation, with its invalid inputs, against the real database. */
import { createHash, randomUUID } from 'node:crypto';
import { parse, specifiedRules, validate } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depthLimit } from '../src/graphql/depth-limit.ts';
import { normalizeError } from '../src/graphql/errors.ts';
import { Organization } from '../src/organizations/organization.entity.ts';
import { MemberRole } from '../src/auth/membership.entity.ts';
import { createSchema } from '../src/graphql/schema.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';

let app: TestApp;
let acme: Awaited<ReturnType<typeof newOrganization>>;
let globex: Awaited<ReturnType<typeof newOrganization>>;

beforeAll(async () => {
  app = await startTestApp();
  acme = await newOrganization(app.url, 'Acme');
  globex = await newOrganization(app.url, 'Globex');
});
afterAll(() => app?.close());

const sql = (query: string, params: unknown[] = []) => app.db.orm.em.getConnection().execute(query, params);
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const codes = (res: { errors?: { extensions: { code: string } }[] }) => res.errors?.map((e) => e.extensions.code);

const CREATE_AGENT = `mutation($input: CreateAgentInput!) { createAgent(input: $input) { id handle name description modelName temperature visibility systemPrompt userPrompt promptType promptTemplate datastoreIds } }`;
const CREATE_DATASTORE = `mutation($input: CreateDatastoreInput!) { createDatastore(input: $input) { id name description visibility embeddingModel embeddingDimension } }`;

describe('accounts and sessions', () => {
  it('signUp returns a session token, stores only its hash, and sets an httpOnly cookie', async () => {
    const email = `new-${Date.now()}@example.test`;
    const res = await gql(app.url, `mutation { signUp(input: { email: "${email}", password: "long enough pw", organizationName: "New Co" }) { token user { email } organization { name } } }`);
    expect(res.errors).toBeUndefined();
    const { token } = res.data.signUp;
    expect(token).toMatch(/^st_/);
    expect(res.data.signUp).toMatchObject({ user: { email }, organization: { name: 'New Co' } });
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/ab_session=st_/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    const rows = await sql(`select token_hash from sessions where token_hash = ?`, [sha256(token)]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(await sql(`select * from sessions`))).not.toContain(token);
    const users = await sql(`select password_hash from users where email = ?`, [email]);
    expect(users[0].password_hash).toMatch(/^scrypt\$/);
    expect(users[0].password_hash).not.toContain('long enough pw');
  });

  it('signUp refuses a taken email (CONFLICT), a bad email and a short password (BAD_USER_INPUT)', async () => {
    const taken = await gql(app.url, `mutation { signUp(input: { email: "${acme.email}", password: "long enough pw", organizationName: "Dup" }) { token } }`);
    expect(codes(taken)).toEqual(['CONFLICT']);
    const bad = await gql(app.url, `mutation { signUp(input: { email: "nope", password: "long enough pw", organizationName: "X" }) { token } }`);
    expect(codes(bad)).toEqual(['BAD_USER_INPUT']);
    expect(bad.errors![0].extensions.details).toMatchObject({ field: 'email' });
    const short = await gql(app.url, `mutation { signUp(input: { email: "short@example.test", password: "short", organizationName: "X" }) { token } }`);
    expect(codes(short)).toEqual(['BAD_USER_INPUT']);
    expect(await sql(`select 1 from users where email in ('nope', 'short@example.test')`)).toHaveLength(0);
  });

  it('login, me over the cookie, logout revokes the session', async () => {
    const login = await gql(app.url, `mutation($e: String!) { login(input: { email: $e, password: "correct horse battery" }) { token } }`, { e: acme.email.toUpperCase() });
    expect(login.errors).toBeUndefined();
    const token = login.data.login.token;
    const viaCookie = await gql(app.url, `{ me { via role user { email } organization { id name } } }`, {}, { headers: { cookie: `ab_session=${token}` } });
    expect(viaCookie.data.me).toEqual({ via: 'session', role: 'owner', user: { email: acme.email }, organization: { id: acme.organizationId, name: 'Acme' } });

    const logout = await gql(app.url, `mutation { logout }`, {}, { token });
    expect(logout.data.logout).toBe(true);
    const after = await gql(app.url, `{ me { via } }`, {}, { token });
    expect(after.status).toBe(401);
    expect(codes(after)).toEqual(['UNAUTHENTICATED']);
    // A stale cookie is ignored rather than refused: the browser is simply anonymous.
    const staleCookie = await gql(app.url, `{ me { via } }`, {}, { headers: { cookie: `ab_session=${token}` } });
    expect(codes(staleCookie)).toEqual(['UNAUTHENTICATED']);
    expect(staleCookie.status).toBe(200);
  });

  it('login with a wrong password is UNAUTHENTICATED, and repeated failures are RATE_LIMITED', async () => {
    const attempt = () => gql(app.url, `mutation($e: String!) { login(input: { email: $e, password: "wrong password" }) { token } }`, { e: globex.email });
    expect(codes(await attempt())).toEqual(['UNAUTHENTICATED']);
    for (let i = 0; i < 9; i++) await attempt();
    expect(codes(await attempt())).toEqual(['RATE_LIMITED']);
    const unknown = await gql(app.url, `mutation { login(input: { email: "ghost@example.test", password: "whatever1" }) { token } }`);
    expect(codes(unknown)).toEqual(['UNAUTHENTICATED']);
  });

  it('me with an API key names the organization and no user', async () => {
    const res = await gql(app.url, `{ me { via role user { email } organization { id } } }`, {}, { token: acme.apiKey });
    expect(res.data.me).toEqual({ via: 'apiKey', role: null, user: null, organization: { id: acme.organizationId } });
  });
});

describe('API keys', () => {
  it('are shown once, stored hashed, listed without the secret, and stop working when revoked', async () => {
    const created = await gql(app.url, `mutation { createApiKey(input: { name: "ci" }) { id key apiKey { name prefix revokedAt } } }`, {}, { token: acme.session });
    expect(created.errors).toBeUndefined();
    const { id, key } = created.data.createApiKey;
    expect(key).toMatch(/^ak_/);
    expect(created.data.createApiKey.apiKey).toEqual({ name: 'ci', prefix: key.slice(0, 10), revokedAt: null });
    expect(await sql(`select 1 from api_keys where key_hash = ?`, [sha256(key)])).toHaveLength(1);
    expect(JSON.stringify(await sql(`select * from api_keys`))).not.toContain(key);

    const listed = await gql(app.url, `{ apiKeys { id name prefix } }`, {}, { token: acme.session });
    expect(listed.data.apiKeys.map((k: { id: string }) => k.id)).toContain(id);
    expect(JSON.stringify(listed)).not.toContain(key);

    expect((await gql(app.url, `{ me { via } }`, {}, { token: key })).data.me.via).toBe('apiKey');
    const revoked = await gql(app.url, `mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`, { id }, { token: acme.session });
    expect(revoked.data.revokeApiKey.revokedAt).toBeTruthy();
    const refused = await http('GET', `${app.api}/agents/@nobody`, { token: key });
    expect(refused.status).toBe(401);
  });

  it('cannot be managed with an API key, nor across organizations', async () => {
    const viaKey = await gql(app.url, `mutation { createApiKey(input: { name: "escalate" }) { key } }`, {}, { token: acme.apiKey });
    expect(codes(viaKey)).toEqual(['FORBIDDEN']);
    const anonymous = await gql(app.url, `{ apiKeys { id } }`);
    expect(codes(anonymous)).toEqual(['UNAUTHENTICATED']);
    const mine = await gql(app.url, `{ apiKeys { id } }`, {}, { token: acme.session });
    const otherOrg = await gql(app.url, `mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: mine.data.apiKeys[0].id }, { token: globex.session });
    expect(codes(otherOrg)).toEqual(['NOT_FOUND']);
    const empty = await gql(app.url, `mutation { createApiKey(input: { name: "" }) { key } }`, {}, { token: acme.session });
    expect(codes(empty)).toEqual(['BAD_USER_INPUT']);
  });

  it('revoking a malformed or unknown id is NOT_FOUND, never a database error', async () => {
    const malformed = await gql(app.url, `mutation { revokeApiKey(id: "not-a-uuid") { id } }`, {}, { token: acme.session });
    expect(codes(malformed)).toEqual(['NOT_FOUND']);
    expect(malformed.errors![0].extensions.details).toEqual({ field: 'id' });
    const unknown = await gql(app.url, `mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: randomUUID() }, { token: acme.session });
    expect(codes(unknown)).toEqual(['NOT_FOUND']);
    expect(unknown.errors![0].message).toBe('API key not found.');
    // Past the schema's edge too: the service's own lookup never sends such text to the database.
    const owner = { kind: 'session' as const, organizationId: acme.organizationId, userId: acme.userId, sessionId: randomUUID(), role: MemberRole.owner };
    await expect(app.services.auth.revokeApiKey(app.db.orm.em.fork(), owner, 'not-a-uuid')).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'API key not found.' });
  });

  it("the ORM's own not-found (findOneOrFail) is NOT_FOUND, its query kept inside", async () => {
    const thrown = await app.db.orm.em.fork().findOneOrFail(Organization, randomUUID()).catch((err: unknown) => err);
    const { error, internal } = normalizeError(thrown);
    expect({ code: error.code, message: error.message, internal }).toEqual({ code: 'NOT_FOUND', message: 'Not found.', internal: false });
  });
});

describe('datastores', () => {
  it('create, read, list with pages, update and delete', async () => {
    const created = await gql(app.url, CREATE_DATASTORE, { input: { name: 'Docs', visibility: 'public' } }, { token: acme.apiKey });
    expect(created.errors).toBeUndefined();
    expect(created.data.createDatastore).toMatchObject({ name: 'Docs', description: '', visibility: 'public', embeddingDimension: 512 });
    const id = created.data.createDatastore.id;

    const anonymous = await gql(app.url, `query($id: ID!) { datastore(id: $id) { id name } }`, { id });
    expect(anonymous.data.datastore.name).toBe('Docs');

    const updated = await gql(app.url, `mutation($id: ID!) { updateDatastore(id: $id, input: { visibility: private, description: "internal" }) { visibility description } }`, { id }, { token: acme.apiKey });
    expect(updated.data.updateDatastore).toEqual({ visibility: 'private', description: 'internal' });
    expect(codes(await gql(app.url, `query($id: ID!) { datastore(id: $id) { id } }`, { id }))).toEqual(['NOT_FOUND']);
    expect(codes(await gql(app.url, `query($id: ID!) { datastore(id: $id) { id } }`, { id }, { token: globex.apiKey }))).toEqual(['NOT_FOUND']);
    expect(codes(await gql(app.url, `mutation($id: ID!) { deleteDatastore(id: $id) { id } }`, { id }, { token: globex.apiKey }))).toEqual(['NOT_FOUND']);

    for (let i = 0; i < 4; i++) await gql(app.url, CREATE_DATASTORE, { input: { name: `DS ${i}` } }, { token: acme.apiKey });
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: any = await gql(app.url, `query($after: String) { datastores(first: 2, after: $after) { nodes { id } pageInfo { endCursor hasNextPage } } }`, { after }, { token: acme.apiKey });
      seen.push(...page.data.datastores.nodes.map((n: { id: string }) => n.id));
      if (!page.data.datastores.pageInfo.hasNextPage) break;
      after = page.data.datastores.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    expect(seen).toEqual([...seen].sort().reverse()); // newest first
    const globexList = await gql(app.url, `{ datastores { nodes { id } } }`, {}, { token: globex.apiKey });
    expect(globexList.data.datastores.nodes).toEqual([]);

    const deleted = await gql(app.url, `mutation($id: ID!) { deleteDatastore(id: $id) { id } }`, { id }, { token: acme.apiKey });
    expect(deleted.data.deleteDatastore.id).toBe(id);
    expect(await sql(`select 1 from datastores where id = ?`, [id])).toHaveLength(0);
  });

  it('refuses bad input and anonymous changes', async () => {
    expect(codes(await gql(app.url, CREATE_DATASTORE, { input: { name: '' } }, { token: acme.apiKey }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await gql(app.url, CREATE_DATASTORE, { input: { name: 'x', visibility: 'open' } }, { token: acme.apiKey }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await gql(app.url, CREATE_DATASTORE, { input: { name: 'x' } }))).toEqual(['UNAUTHENTICATED']);
    expect(codes(await gql(app.url, CREATE_DATASTORE, { input: { name: 'x', chunkSize: 50 } }, { token: acme.apiKey }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await gql(app.url, CREATE_DATASTORE, { input: { name: 'x', chunkSize: 500, chunkOverlap: 300 } }, { token: acme.apiKey }))).toEqual(['BAD_USER_INPUT']);
    const tuned = await gql(app.url, `mutation { createDatastore(input: { name: "tuned", chunkSize: 500, chunkOverlap: 50 }) { chunkSize chunkOverlap } }`, {}, { token: acme.apiKey });
    expect(tuned.data.createDatastore).toEqual({ chunkSize: 500, chunkOverlap: 50 });
    expect(codes(await gql(app.url, `{ datastores(first: 0) { nodes { id } } }`, {}, { token: acme.apiKey }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await gql(app.url, `{ datastores(first: 101) { nodes { id } } }`, {}, { token: acme.apiKey }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await gql(app.url, `{ datastores(after: "garbage") { nodes { id } } }`, {}, { token: acme.apiKey }))).toEqual(['BAD_USER_INPUT']);
  });
});

describe('agents', () => {
  it('createAgent with every field, linked datastores, and defaults', async () => {
    const ds = await gql(app.url, CREATE_DATASTORE, { input: { name: 'KB' } }, { token: acme.apiKey });
    const dsId = ds.data.createDatastore.id;
    const res = await gql(app.url, CREATE_AGENT, {
      input: {
        name: 'Support',
        description: 'Answers support questions',
        handle: '@Acme-support'.toLowerCase(),
        modelName: 'model_3_5_turbo_16k',
        temperature: 0.7,
        visibility: 'public',
        systemPrompt: 'Be kind.',
        userPrompt: '{query}',
        promptType: 'customer_support',
        promptTemplate: 'legacy',
        datastoreIds: [dsId],
      },
    }, { token: acme.session });
    expect(res.errors).toBeUndefined();
    expect(res.data.createAgent).toMatchObject({
      handle: 'acme-support',
      modelName: 'model_3_5_turbo_16k',
      temperature: 0.7,
      visibility: 'public',
      promptType: 'customer_support',
      promptTemplate: 'legacy',
      datastoreIds: [dsId],
    });
    const byHandle = await gql(app.url, `{ agent(id: "@acme-support") { id name } }`);
    expect(byHandle.data.agent).toEqual({ id: res.data.createAgent.id, name: 'Support' });

    const minimal = await gql(app.url, CREATE_AGENT, { input: { name: 'Minimal' } }, { token: acme.apiKey });
    expect(minimal.data.createAgent).toMatchObject({
      description: '', handle: null, modelName: 'model_3_5_turbo', temperature: 0, visibility: 'private', systemPrompt: '', userPrompt: '', promptType: null, datastoreIds: [],
    });
  });

  it('outsiders read a public agent but not its prompts', async () => {
    const res = await gql(app.url, CREATE_AGENT, { input: { name: 'Public', visibility: 'public', systemPrompt: 'secret sauce' } }, { token: acme.apiKey });
    const id = res.data.createAgent.id;
    const open = await gql(app.url, `query($id: ID!) { agent(id: $id) { name visibility } }`, { id });
    expect(open.data.agent).toEqual({ name: 'Public', visibility: 'public' });
    const prompts = await gql(app.url, `query($id: ID!) { agent(id: $id) { name systemPrompt } }`, { id }, { token: globex.apiKey });
    expect(codes(prompts)).toEqual(['FORBIDDEN']);
    expect(JSON.stringify(prompts)).not.toContain('secret sauce');
    const anon = await gql(app.url, `query($id: ID!) { agent(id: $id) { systemPrompt } }`, { id });
    expect(codes(anon)).toEqual(['UNAUTHENTICATED']);
  });

  it('refuses invalid input, naming the field, and writes nothing', async () => {
    const before = (await sql(`select count(*)::int as n from agents`))[0].n;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ name: 'x', temperature: 1.01 }, 'BAD_USER_INPUT', 'temperature'],
      [{ name: 'x', temperature: -1 }, 'BAD_USER_INPUT', 'temperature'],
      [{ name: 'x', modelName: 'model_5' }, 'BAD_USER_INPUT', 'modelName'],
      [{ name: 'x', visibility: 'PUBLIC' }, 'BAD_USER_INPUT', 'visibility'],
      [{ name: '' }, 'BAD_USER_INPUT', 'name'],
      [{ name: 'x', handle: 'a b' }, 'BAD_USER_INPUT', 'handle'],
      [{ name: 'x', datastoreIds: ['01a20258-07dc-7d9b-9f4d-0df70fdea414'] }, 'NOT_FOUND', 'datastoreIds'],
      [{ name: 'x', datastoreIds: ['nope'] }, 'NOT_FOUND', 'datastoreIds'],
    ];
    for (const [input, code, field] of cases) {
      const res = await gql(app.url, CREATE_AGENT, { input }, { token: acme.apiKey });
      expect(codes(res), JSON.stringify(input)).toEqual([code]);
      expect(res.errors![0].extensions.details?.field, JSON.stringify(input)).toBe(field);
    }
    // Another organization's datastore cannot be linked.
    const theirs = await gql(app.url, CREATE_DATASTORE, { input: { name: 'Theirs' } }, { token: globex.apiKey });
    const stolen = await gql(app.url, CREATE_AGENT, { input: { name: 'x', datastoreIds: [theirs.data.createDatastore.id] } }, { token: acme.apiKey });
    expect(codes(stolen)).toEqual(['NOT_FOUND']);
    expect((await sql(`select count(*)::int as n from agents`))[0].n).toBe(before);
  });

  it('handles are unique: CONFLICT', async () => {
    await gql(app.url, CREATE_AGENT, { input: { name: 'A', handle: 'unique-one' } }, { token: acme.apiKey });
    const dup = await gql(app.url, CREATE_AGENT, { input: { name: 'B', handle: 'unique-one' } }, { token: globex.apiKey });
    expect(codes(dup)).toEqual(['CONFLICT']);
  });

  it('updateAgent changes only what is given; deleteAgent returns the record', async () => {
    const created = await gql(app.url, CREATE_AGENT, { input: { name: 'Up', temperature: 0.2, systemPrompt: 'keep me' } }, { token: acme.apiKey });
    const id = created.data.createAgent.id;
    const upd = await gql(app.url, `mutation($id: ID!) { updateAgent(id: $id, input: { description: "new", visibility: public }) { name description temperature systemPrompt visibility } }`, { id }, { token: acme.apiKey });
    expect(upd.data.updateAgent).toEqual({ name: 'Up', description: 'new', temperature: 0.2, systemPrompt: 'keep me', visibility: 'public' });
    const noDesc = await gql(app.url, `mutation($id: ID!) { updateAgent(id: $id, input: { name: "x" }) { name } }`, { id }, { token: acme.apiKey });
    expect(codes(noDesc)).toEqual(['BAD_USER_INPUT']);
    const del = await gql(app.url, `mutation($id: ID!) { deleteAgent(id: $id) { id name } }`, { id }, { token: acme.apiKey });
    expect(del.data.deleteAgent).toEqual({ id, name: 'Up' });
    expect(codes(await gql(app.url, `query($id: ID!) { agent(id: $id) { id } }`, { id }, { token: acme.apiKey }))).toEqual(['NOT_FOUND']);
  });

  it('agents lists only the own organization, in pages', async () => {
    const org = await newOrganization(app.url, 'Paged');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await gql(app.url, CREATE_AGENT, { input: { name: `P${i}` } }, { token: org.apiKey })).data.createAgent.id);
    const first = await gql(app.url, `{ agents(first: 3) { nodes { id } pageInfo { hasNextPage endCursor } } }`, {}, { token: org.apiKey });
    const second = await gql(app.url, `query($a: String) { agents(first: 3, after: $a) { nodes { id } pageInfo { hasNextPage } } }`, { a: first.data.agents.pageInfo.endCursor }, { token: org.apiKey });
    const all = [...first.data.agents.nodes, ...second.data.agents.nodes].map((n: { id: string }) => n.id);
    expect(all).toEqual([...ids].reverse());
    expect(first.data.agents.pageInfo.hasNextPage).toBe(true);
    expect(second.data.agents.pageInfo.hasNextPage).toBe(false);
    expect(codes(await gql(app.url, `{ agents { nodes { id } } }`))).toEqual(['UNAUTHENTICATED']);
  });
});

describe('GraphQL endpoint protections', () => {
  it('marks promptType and promptTemplate as deprecated', async () => {
    const res = await gql(app.url, `{ __type(name: "Agent") { fields(includeDeprecated: true) { name isDeprecated } } }`);
    const deprecated = res.data.__type.fields.filter((f: { isDeprecated: boolean }) => f.isDeprecated).map((f: { name: string }) => f.name);
    expect(deprecated.sort()).toEqual(['promptTemplate', 'promptType']);
  });

  it('refuses operations deeper than the limit', async () => {
    // The schema has no cycles deep enough to pass 10 levels, so the rule is checked on the
    // real schema with a lower limit, and over HTTP with the configured one.
    const schema = await createSchema();
    const errors = validate(schema, parse(`{ me { organization { id } } }`), [...specifiedRules, depthLimit(1)]);
    expect(errors.map((e) => e.message)).toEqual(['The operation is nested 2 levels deep; the limit is 1.']);
    expect(validate(schema, parse(`{ me { organization { id } } }`), [depthLimit(2)])).toEqual([]);
    const viaFragments = parse(`query { ...A } fragment A on Query { me { ...B } } fragment B on Me { organization { id } }`);
    expect(validate(schema, viaFragments, [depthLimit(1)])).toHaveLength(1);
    expect((await gql(app.url, `{ me { organization { id } } }`, {}, { token: acme.apiKey })).errors).toBeUndefined();
  });

  it('prevents CSRF: a simple GET without a preflight header is refused', async () => {
    const res = await fetch(`${app.url}/graphql?query=${encodeURIComponent('{ me { via } }')}`);
    expect(res.status).toBe(400);
    const ok = await fetch(`${app.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { 'apollo-require-preflight': '1' } });
    expect(ok.status).toBe(200);
  });

  it('an invalid Bearer token is 401 over GraphQL too', async () => {
    const res = await gql(app.url, `{ __typename }`, {}, { token: 'st_revoked-or-made-up' });
    expect(res.status).toBe(401);
    expect(codes(res)).toEqual(['UNAUTHENTICATED']);
  });

  it('malformed JSON and unknown fields are 400', async () => {
    const res = await http('POST', `${app.url}/graphql`, { rawBody: '{"query": ' });
    expect(res.status).toBe(400);
    const unknown = await gql(app.url, `{ nope }`);
    expect(unknown.status).toBe(400);
    expect(codes(unknown)).toEqual(['BAD_USER_INPUT']);
  });
});
