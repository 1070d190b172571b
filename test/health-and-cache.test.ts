/** Health endpoints, and the read caches under cross-process invalidation (LISTEN/NOTIFY). */
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TtlCache } from '../src/cache.ts';
import { assertPgvector } from '../src/db/orm.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';

let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;

beforeAll(async () => {
  app = await startTestApp();
  org = await newOrganization(app.url, 'Cache');
});
afterAll(() => app?.close());

/** SQL from outside this process's ORM, as another API or worker process would send it. */
async function fromAnotherConnection(sql: string, params: unknown[]) {
  if (app.db.pglite) return app.db.pglite.query(sql, params);
  const client = new pg.Client({ connectionString: app.databaseUrl });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

const eventually = async (check: () => Promise<boolean>, ms = 3000) => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
};

describe('health', () => {
  it('/healthz says the process is up; /readyz that the database answers and is migrated', async () => {
    expect(await http('GET', `${app.url}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await http('GET', `${app.url}/readyz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('the vector extension is installed by the first migration', async () => {
    const rows = await app.db.orm.em.getConnection().execute(`select extname from pg_extension where extname = 'vector'`);
    expect(rows).toEqual([{ extname: 'vector' }]);
    await expect(assertPgvector(app.db.orm, { kind: 'pglite', dataDir: null })).resolves.toBeUndefined();
  });

  // A real PostgreSQL server without pgvector (Debian bookworm's PostgreSQL 15), started by .ci/run.
  it.runIf(process.env.TEST_PG_NO_VECTOR_URL)('start-up stops with one clear sentence on a server without pgvector', async () => {
    const child = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', 'src/main.ts'], {
      cwd: path.resolve(import.meta.dirname, '..'),
      env: { ...process.env, DATABASE_URL: process.env.TEST_PG_NO_VECTOR_URL!, PORT: '0', DATA_DIR: app.config.dataDir },
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => child.on('close', r));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^The pgvector extension is missing on the PostgreSQL server at 127\.0\.0\.1:\d+\/\w+: install pgvector there/);
  });
});

describe('agent reads are cached and invalidated across processes', () => {
  it('a change announced by another process is seen at once', async () => {
    const created = await gql(app.url, `mutation { createAgent(input: { name: "Before", visibility: public }) { id } }`, {}, { token: org.apiKey });
    const id = created.data.createAgent.id;
    expect((await http('GET', `${app.api}/agents/${id}`)).body.name).toBe('Before');

    // Another process changes the row and announces it, as AgentService does in every process.
    await fromAnotherConnection(`update agents set name = 'After' where id = $1`, [id]);
    expect((await http('GET', `${app.api}/agents/${id}`)).body.name).toBe('Before'); // served from the cache
    await fromAnotherConnection(`select pg_notify('agent_changed', $1)`, [id]);
    expect(await eventually(async () => (await http('GET', `${app.api}/agents/${id}`)).body.name === 'After')).toBe(true);
  });

  it('a key revoked by another process stops working at once', async () => {
    const key = (await gql(app.url, `mutation { createApiKey(input: { name: "x" }) { id key } }`, {}, { token: org.session })).data.createApiKey;
    expect((await gql(app.url, `{ me { via } }`, {}, { token: key.key })).data.me.via).toBe('apiKey');
    await fromAnotherConnection(`update api_keys set revoked_at = now() where id = $1`, [key.id]);
    await fromAnotherConnection(`select pg_notify('credential_revoked', $1)`, [key.id]);
    expect(await eventually(async () => (await gql(app.url, `{ me { via } }`, {}, { token: key.key })).status === 401)).toBe(true);
  });
});

describe('TtlCache', () => {
  it('when full, drops the least recently read entry, not the oldest', () => {
    const cache = new TtlCache<string, string>(60_000, 2);
    cache.set('older', 'read often');
    cache.set('newer', 'never read');
    expect(cache.get('older')).toBe('read often');
    cache.set('third', 'arrives');
    expect(cache.get('older')).toBe('read often');
    expect(cache.get('newer')).toBeUndefined();
    expect(cache.get('third')).toBe('arrives');
  });

  it('expires entries after the TTL; a per-entry TTL shortens it but never lengthens it; null is cached', () => {
    let now = 1_000;
    const cache = new TtlCache<string, string | null>(100, 10, () => now);
    cache.set('default', 'a');
    cache.set('short', 'b', 10);
    cache.set('long', 'c', 10_000);
    cache.set('absent', null);
    cache.set('due', 'd', 0);
    expect(cache.get('absent')).toBeNull();
    expect(cache.get('due')).toBeUndefined();
    now += 50;
    expect([cache.get('default'), cache.get('short'), cache.get('long')]).toEqual(['a', undefined, 'c']);
    now += 60;
    expect([cache.get('default'), cache.get('long'), cache.get('absent')]).toEqual([undefined, undefined, undefined]);
  });

  it('deleteWhere drops every entry whose value matches', () => {
    const cache = new TtlCache<string, { id: number }>(60_000);
    cache.set('a', { id: 1 });
    cache.set('@handle', { id: 1 });
    cache.set('b', { id: 2 });
    cache.deleteWhere((v) => v.id === 1);
    expect([cache.get('a'), cache.get('@handle'), cache.get('b')]).toEqual([undefined, undefined, { id: 2 }]);
  });
});
