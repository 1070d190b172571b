/**
 * Limits hold across server processes and restarts: request rates and the sign-in throttle are
 * counted in the database, not in one process's memory.
 *
 * On PostgreSQL (TEST_DATABASE_URL) two servers run side by side on one database. PGlite is one
 * process's database, so there the second server is the first one's successor on the same data
 * folder: "limited on one, limited on the other" becomes "limited before a restart, limited
 * after it". Every test runs on both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Running } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { createTestDatabase } from './support/app.ts';
import { waitFor } from './support/wait.ts';

const sideBySide = Boolean(process.env.TEST_DATABASE_URL);
const LIMITS = { RATE_LIMIT_VISITOR_PER_MINUTE: '3', RATE_LIMIT_IP_PER_MINUTE: '5' };

const folders: string[] = [];
let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** PGlite: the one data folder both servers use, one after the other. */
let sharedDir: string;
const servers: (Running | null)[] = [null, null];

async function boot(): Promise<Running> {
  const dataDir = sideBySide ? mkdtempSync(path.join(tmpdir(), 'agentbase-limits-')) : sharedDir;
  if (sideBySide) folders.push(dataDir);
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ...(sideBySide ? { DATABASE_URL: database.url } : {}), // PGlite: its data folder under DATA_DIR
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...LIMITS,
  });
  return start(config);
}

/** Server `n` (0 or 1), running. On PGlite, starting one stops the other first. */
async function server(n: 0 | 1): Promise<{ url: string; api: string }> {
  if (!servers[n]) {
    if (!sideBySide) {
      await servers[1 - n]?.stop();
      servers[1 - n] = null;
    }
    servers[n] = await boot();
  }
  const url = `http://127.0.0.1:${servers[n]!.port}`;
  return { url, api: `${url}/api` };
}

/** Stops server `n` and starts it again on the same database. */
async function restart(n: 0 | 1): Promise<void> {
  await servers[n]?.stop();
  servers[n] = null;
  await server(n);
}

let owner: Awaited<ReturnType<typeof newOrganization>>;
let agent: string;
let form: string;

const from = (ip: string) => ({ 'x-forwarded-for': ip });
const ask = async (n: 0 | 1, ip: string, visitorId: string) => http('POST', `${(await server(n)).api}/agents/${agent}/query`, { body: { query: 'hello', visitorId }, headers: from(ip) });
const fill = async (n: 0 | 1, ip: string, visitorId: string) => http('POST', `${(await server(n)).api}/forms/${form}/chat`, { body: { query: 'hello', visitorId }, headers: from(ip) });

/** A 429 as a client sees it: the table's code and when to try again. */
function expectLimited(res: { status: number; body: any }, windowSeconds: number) {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.body.error.code).toBe('RATE_LIMITED');
  const after = res.body.error.details.retryAfterSeconds;
  expect(Number.isInteger(after)).toBe(true);
  expect(after).toBeGreaterThanOrEqual(1);
  expect(after).toBeLessThanOrEqual(windowSeconds);
}

beforeAll(async () => {
  database = await createTestDatabase();
  sharedDir = mkdtempSync(path.join(tmpdir(), 'agentbase-limits-'));
  folders.push(sharedDir);
  const { url } = await server(0);
  owner = await newOrganization(url, 'Limits');
  agent = (await gql(url, `mutation { createAgent(input: { name: "Public", visibility: public }) { id } }`, {}, { token: owner.apiKey })).data.createAgent.id;
  const created = await gql(url, `mutation($input: CreateFormInput!) { createForm(input: $input) { form { id } } }`, { input: { name: 'Contact', published: true, schema: { type: 'object', properties: { name: { type: 'string', title: 'Your name' } }, required: ['name'] } } }, { token: owner.apiKey });
  form = created.data.createForm.form.id;
}, 120_000);

afterAll(async () => {
  for (const s of servers) await s?.stop();
  await database?.drop();
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

describe(sideBySide ? 'two servers on one PostgreSQL database' : 'a server and its successor on one PGlite data folder', () => {
  it('a visitor limited on one server is limited on the other, and told when to try again', async () => {
    for (let i = 0; i < 3; i++) expect((await ask(0, '10.0.1.1', 'visitor-a')).status).toBe(200);
    // Another address: only the visitor's own budget is spent.
    expectLimited(await ask(1, '10.0.1.2', 'visitor-a'), 60);
    expect((await ask(1, '10.0.1.2', 'visitor-b')).status).toBe(200);
    // The same refusal over GraphQL.
    const graphql = await gql((await server(1)).url, `mutation($id: ID!) { agentQuery(id: $id, input: { query: "hi", visitorId: "visitor-a" }) { answer } }`, { id: agent }, { headers: from('10.0.1.3') });
    expect(graphql.errors![0]!.extensions.code).toBe('RATE_LIMITED');
    expect(graphql.errors![0]!.extensions.details).toEqual({ retryAfterSeconds: expect.any(Number) });
  });

  it('one address has one budget for answers and forms, whichever server it reaches', async () => {
    const ip = '10.0.2.1';
    for (let i = 0; i < 3; i++) expect((await ask(0, ip, `asker-${i}`)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await fill(1, ip, `filler-${i}`)).status).toBe(200);
    // Five requests from new visitors: the address is spent, for both features, on both servers.
    expectLimited(await fill(1, ip, 'filler-new'), 60);
    expectLimited(await ask(0, ip, 'asker-new'), 60);
    expectLimited(await fill(0, ip, 'filler-newer'), 60);
    // Another address is not touched.
    expect((await fill(0, '10.0.2.2', 'filler-new')).status).toBe(200);
  });

  it('the sign-in throttle counts failures on every server, and a refusal says when to try again', async () => {
    const login = async (n: 0 | 1, password: string, ip = '10.0.3.1') =>
      gql((await server(n)).url, `mutation($e: String!, $p: String!) { login(input: { email: $e, password: $p }) { token } }`, { e: owner.email, p: password }, { headers: from(ip) });
    for (let i = 0; i < 5; i++) expect((await login(0, 'wrong password')).errors![0]!.extensions.code).toBe('UNAUTHENTICATED');
    for (let i = 0; i < 5; i++) expect((await login(1, 'wrong password')).errors![0]!.extensions.code).toBe('UNAUTHENTICATED');
    for (const n of [0, 1] as const) {
      // Ten failures in all: even the right password waits now.
      const refused = await login(n, 'correct horse battery');
      expect(refused.errors![0]!.extensions.code).toBe('RATE_LIMITED');
      const after = refused.errors![0]!.extensions.details!.retryAfterSeconds as number;
      expect(after).toBeGreaterThan(14 * 60);
      expect(after).toBeLessThanOrEqual(15 * 60);
    }
    // Another address signs in; a success clears its own count.
    expect((await login(1, 'correct horse battery', '10.0.3.2')).data.login.token).toEqual(expect.any(String));
  });

  it('a restart keeps the count, and an ended window starts again', async () => {
    for (let i = 0; i < 3; i++) expect((await ask(0, '10.0.4.1', 'visitor-r')).status).toBe(200);
    // A visitor of long ago: its row goes when a server next tidies up (at its first request).
    await servers[0]!.db.orm.em.getConnection().execute(`insert into rate_counters (key, hits, expires_at) values ('visitor:gone|long-ago', 3, now() - interval '1 hour')`);
    await restart(0);
    expectLimited(await ask(0, '10.0.4.1', 'visitor-r'), 60);
    const left = async () => (await servers[0]!.db.orm.em.getConnection().execute(`select key from rate_counters where key = 'visitor:gone|long-ago'`)).length;
    await waitFor(async () => (await left()) === 0, 10_000, 'the ended window deleted');
    // The minute passes (moved back in the database rather than waited for).
    const running = servers[0]!;
    await running.db.orm.em.getConnection().execute(`update rate_counters set expires_at = now() - interval '1 second' where key in ('ip:10.0.4.1', 'visitor:${agent}|visitor-r')`);
    expect((await ask(0, '10.0.4.1', 'visitor-r')).status).toBe(200);
  }, 60_000);
});
