/**
 * When things go wrong: the organization's stored-token limit, crawlers refusing private
 * addresses, a worker dying in the middle of a job, and the API and the workers running apart
 * (ROLE=api, ROLE=worker / `npm run worker`).
 *
 * The killed-worker scenario needs two processes on one database, so it runs as real processes
 * on PostgreSQL (TEST_DATABASE_URL); on the embedded PGlite, which one process owns, the same
 * scenario runs in one process with the first attempt dying after chunking.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitDocument } from '../src/ingestion/chunker.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { chunks, createDatastore, datasource, settled, sql, upload } from './support/ingest.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { MIME, makePdf } from './support/samples.ts';
import { connects, freePort, groupAlive, killAll, root, signal, spawnMain, spawnService } from './support/process.ts';
import { waitFor } from './support/wait.ts';
import { endpointEnv, FAST_RECOVERY } from './support/service.ts';

const ON_POSTGRES = !!process.env.TEST_DATABASE_URL;


const apps: TestApp[] = [];

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const started = await startTestApp(env);
  apps.push(started);
  return started;
}

afterAll(async () => {
  killAll();
  await Promise.all(apps.map((a) => a.close()));
});

const createText = (a: TestApp, token: string, datastoreId: string, name: string, text: string) =>
  call('POST', `${a.api}/datasources`, { token, body: { datastoreId, type: 'text', name, text } });

/** Every chunk the datasource should have, in order, computed the way the worker splits. */
async function expectExactlyOnce(a: TestApp, datasourceId: string, datastoreId: string, text: string) {
  const [store] = await sql(a, 'select chunk_size, chunk_overlap from datastores where id = ?', [datastoreId]);
  const expected = await splitDocument({ text, metadata: {} }, { chunkSize: store.chunk_size, chunkOverlap: store.chunk_overlap });
  const [counts] = await sql(a, 'select count(*)::int as n, count(distinct position)::int as positions, count(distinct id)::int as ids from chunks where datasource_id = ?', [datasourceId]);
  const ds = await sql(a, 'select chunk_count from datasources where id = ?', [datasourceId]);
  expect(counts).toEqual({ n: expected.length, positions: expected.length, ids: expected.length });
  expect(ds[0].chunk_count).toBe(expected.length);
  expect((await chunks(a, datasourceId)).map((c) => c.text)).toEqual(expected.map((p) => p.text));
}

/** A document of `n` paragraphs of ~700 characters, each naming its version and number. */
const longDocument = (version: string, n: number) =>
  Array.from({ length: n }, (_, i) => `Paragraph ${i} of ${version}. ${`This part of the ${version} handbook describes procedure ${i} step by step. `.repeat(9)}`).join('\n\n');

// =============================================================================================

describe('a. the stored-token limit of an organization', () => {
  let a: TestApp;
  let org: Awaited<ReturnType<typeof newOrganization>>;
  let store: string;
  const objects = () => {
    const dir = path.join(a.config.dataDir, 'files', 'objects');
    const walk = (d: string): string[] => (existsSync(d) ? readdirSync(d).flatMap((f) => (statSync(path.join(d, f)).isDirectory() ? walk(path.join(d, f)) : [f])) : []);
    return walk(dir).length;
  };
  const snapshot = async () => {
    const [row] = await sql(
      a,
      `select (select count(*)::int from datasources) as datasources, (select count(*)::int from chunks) as chunks, (select count(*)::int from pgboss.job) as jobs`,
    );
    return { ...row, objects: objects() };
  };

  beforeAll(async () => {
    a = await app();
    org = await newOrganization(a.url, 'Limited');
    store = await createDatastore(a, org.apiKey);
  });

  it('a document that would pass the limit ends in usage_limit_reached; one that reaches it exactly is stored', async () => {
    // The operator's way: the organization row.
    await sql(a, 'update organizations set stored_token_limit = 100 where id = ?', [org.organizationId]);

    const first = await createText(a, org.apiKey, store, 'First', 'a'.repeat(199) + '.'); // 200 characters: 50 tokens
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(await settled(a, org.apiKey, first.body.id)).toMatchObject({ status: 'synched', tokenCount: 50 });

    const big = await createText(a, org.apiKey, store, 'Too big', 'b'.repeat(399) + '.'); // 100 tokens: 50 + 100 > 100
    expect(big.status).toBe(200);
    const refused = await settled(a, org.apiKey, big.body.id);
    expect(refused).toMatchObject({ status: 'usage_limit_reached', chunkCount: 0, tokenCount: 0 });
    expect(refused.errorMessage).toBe("Storing 100 more tokens would pass the organization's limit of 100 (50 stored).");
    expect(await chunks(a, big.body.id)).toEqual([]);

    const fits = await createText(a, org.apiKey, store, 'Fits', 'c'.repeat(199) + '.'); // 50 + 50 = 100: allowed
    expect(await settled(a, org.apiKey, fits.body.id)).toMatchObject({ status: 'synched', tokenCount: 50 });
  });

  it('once the limit is reached, new uploads, links and documents get 402 and nothing is written', async () => {
    const before = await snapshot();
    const expect402 = (res: { status: number; body: any }, what: string) => {
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(402);
      expect(res.body.error).toMatchObject({ code: 'PAYMENT_REQUIRED', details: { used: 100, limit: 100 } });
    };
    const pdf = makePdf([['Refused page']]);
    expect402(await upload(a, org.apiKey, store, { name: 'refused.pdf', type: MIME.pdf, data: pdf }), 'direct upload');
    expect402(await upload(a, org.apiKey, store, { name: 'refused.txt', type: MIME.txt, data: 'no room' }, { path: '/datasources', fields: { type: 'file', datastoreId: store } }), 'POST /datasources multipart');
    expect402(await call('POST', `${a.api}/external/datastores/file-upload/generate-link/${store}`, { token: org.apiKey, body: { type: MIME.pdf } }), 'generate-link');
    expect402(await createText(a, org.apiKey, store, 'Refused', 'no room for this text'), 'text document');
    expect402(await call('POST', `${a.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'web_page', config: { source_url: 'https://example.com/' } } }), 'web page');
    const viaGraphql = await gql(a.url, `mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id } }`, { i: { datastoreId: store, type: 'text', name: 'G', text: 'no room' } }, { token: org.apiKey });
    expect(viaGraphql.errors?.[0]?.extensions.code).toBe('PAYMENT_REQUIRED');
    expect(await snapshot()).toEqual(before);

    // Raising the limit (or deleting datasources) lets uploads in again.
    await sql(a, 'update organizations set stored_token_limit = 1000 where id = ?', [org.organizationId]);
    const again = await upload(a, org.apiKey, store, { name: 'again.pdf', type: MIME.pdf, data: pdf });
    expect(again.status).toBe(200);
    expect((await settled(a, org.apiKey, again.body.id)).status).toBe('synched');
  });
});

// =============================================================================================

describe('b. crawlers refuse private addresses (ALLOW_PRIVATE_URLS unset)', () => {
  let a: TestApp;
  let org: Awaited<ReturnType<typeof newOrganization>>;
  let store: string;
  let site: http.Server;
  let port: number;
  const received: string[] = [];

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Secret</title></head><body><article><p>Internal only.</p></article></body></html>');
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    port = (site.address() as AddressInfo).port;
    a = await app();
    expect(a.config.allowPrivateUrls).toBe(false);
    org = await newOrganization(a.url, 'Crawler');
    store = await createDatastore(a, org.apiKey);
  });
  afterAll(() => {
    site?.closeAllConnections();
    site?.close();
  });

  it('web_page and web_site datasources for loopback, private, link-local and IPv4-mapped addresses end in error; no request is made', async () => {
    const targets: [type: string, config: Record<string, string>][] = [
      ['web_page', { source_url: `http://127.0.0.1:${port}/` }],
      ['web_page', { source_url: 'http://169.254.169.254/latest/meta-data/' }],
      ['web_page', { source_url: 'http://10.0.0.1/' }],
      ['web_page', { source_url: `http://[::ffff:127.0.0.1]:${port}/` }],
      ['web_page', { source_url: `http://localhost:${port}/` }],
      ['web_site', { source_url: `http://127.0.0.1:${port}/` }],
      ['web_site', { sitemap: `http://127.0.0.1:${port}/sitemap.xml` }],
    ];
    const created = await Promise.all(
      targets.map(async ([type, config]) => {
        const res = await call('POST', `${a.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type, config } });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return { id: res.body.id as string, url: Object.values(config)[0]! };
      }),
    );
    for (const { id, url } of created) {
      const done = await settled(a, org.apiKey, id);
      expect(done.status, url).toBe('error');
      expect(done.errorMessage, url).toMatch(/^Refusing to fetch .*private address/);
      expect(done.chunkCount).toBe(0);
    }
    expect(received).toEqual([]);
    // A site refused before discovery has no child pages.
    expect(await sql(a, 'select count(*)::int as n from datasources where group_id is not null')).toEqual([{ n: 0 }]);
  });
});

// =============================================================================================

describe('c. a worker dying in the middle of a job', () => {
  let embeddings: OpenAiTestServer;
  const embeddingEnv = () => ({ ...endpointEnv(embeddings.url), EMBEDDING_BATCH_SIZE: '8' });
  const embeddingRequests = () => embeddings.requests.filter((r) => r.path === '/v1/embeddings').length;

  beforeAll(async () => {
    embeddings = await startOpenAiTestServer();
  });
  afterAll(async () => {
    await embeddings?.close();
  });

  if (ON_POSTGRES) {
    it('PostgreSQL: the worker process is SIGKILLed while running; a new worker finishes with every chunk exactly once', async () => {
      // The API alone in this process; workers are separate processes on the same database.
      const a = await app({ ROLE: 'api', ...FAST_RECOVERY, ...embeddingEnv() });
      const org = await newOrganization(a.url, 'Crash');
      const store = await createDatastore(a, org.apiKey);
      const workerEnv = { ROLE: 'worker', DATABASE_URL: a.databaseUrl, DATA_DIR: a.config.dataDir, ...FAST_RECOVERY, ...embeddingEnv() };

      const v1 = longDocument('v1', 12);
      const created = await createText(a, org.apiKey, store, 'Handbook', v1);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const first = spawnMain(workerEnv);
      await first.waitForLog('workers started');
      expect((await settled(a, org.apiKey, created.body.id)).status).toBe('synched');
      await expectExactlyOnce(a, created.body.id, store, v1);

      // The update is processed slowly: the embeddings endpoint holds every answer.
      embeddings.setDelay('/v1/embeddings', 60_000);
      const sentBefore = embeddingRequests();
      const v2 = longDocument('v2', 20);
      const updated = await call('POST', `${a.api}/external/datastores/update/${store}`, { token: org.apiKey, body: { id: created.body.id, text: v2 } });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      await waitFor(async () => (await datasource(a, org.apiKey, created.body.id))?.status === 'running' && embeddingRequests() > sentBefore, 20_000, 'the job to be embedding');

      first.child.kill('SIGKILL');
      expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const killedAt = Date.now();
      embeddings.setDelay('/v1/embeddings', 0);
      // Nothing of the dead attempt is stored: still v1's chunks, still "running".
      expect((await datasource(a, org.apiKey, created.body.id))?.status).toBe('running');
      await expectExactlyOnce(a, created.body.id, store, v1);

      const second = spawnMain(workerEnv);
      const started = await second.waitForLog('workers started');
      expect(started).toMatchObject({ level: 'info', role: 'worker', http: false, database: 'postgres' });
      const done = await settled(a, org.apiKey, created.body.id, 40_000);
      expect(done, done.errorMessage ?? '').toMatchObject({ status: 'synched' });
      const recoverySeconds = (Date.now() - killedAt) / 1000;
      expect(recoverySeconds).toBeLessThan(25);
      await expectExactlyOnce(a, created.body.id, store, v2);
      const texts = (await chunks(a, created.body.id)).map((c) => c.text).join('\n');
      expect(texts).not.toContain('v1');

      // The job was retried once (the attempt of the dead worker), then completed.
      const jobs = await sql(a, `select state, retry_count from pgboss.job where data->>'datasourceId' = ? order by created_on`, [created.body.id]);
      expect(jobs.at(-1)).toMatchObject({ state: 'completed', retry_count: 1 });

      second.child.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);
    }, 90_000);
  } else {
    it('PGlite (one process): the first attempt dies after chunking; the retry finishes with every chunk exactly once', async () => {
      const a = await app({ ...FAST_RECOVERY, ...embeddingEnv() });
      const org = await newOrganization(a.url, 'Crash');
      const store = await createDatastore(a, org.apiKey);

      const v1 = longDocument('v1', 12);
      const created = await createText(a, org.apiKey, store, 'Handbook', v1);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect((await settled(a, org.apiKey, created.body.id)).status).toBe('synched');
      await expectExactlyOnce(a, created.body.id, store, v1);

      // The first embeddings request of the next attempt is refused with a status the client does
      // not retry itself (a 500 would be retried per batch), so that attempt throws after chunking.
      embeddings.failNext('/v1/embeddings', 400, 1, { error: { message: 'The embedding worker crashed.', type: 'server_error', code: null } });
      const v2 = longDocument('v2', 20);
      const updated = await call('POST', `${a.api}/external/datastores/update/${store}`, { token: org.apiKey, body: { id: created.body.id, text: v2 } });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      const done = await settled(a, org.apiKey, created.body.id, 30_000);
      expect(done, done.errorMessage ?? '').toMatchObject({ status: 'synched', errorMessage: null });
      await expectExactlyOnce(a, created.body.id, store, v2);
      expect((await chunks(a, created.body.id)).map((c) => c.text).join('\n')).not.toContain('v1');

      const jobs = await sql(a, `select state, retry_count from pgboss.job where data->>'datasourceId' = ? order by created_on`, [created.body.id]);
      expect(jobs.at(-1)).toMatchObject({ state: 'completed', retry_count: 1 });
    }, 60_000);
  }
});

// =============================================================================================

describe('d. ROLE=api and ROLE=worker (npm run worker) run apart', () => {
  it('ROLE=api serves HTTP and processes nothing: a new datasource stays unsynched', async () => {
    const a = await app({ ROLE: 'api' });
    expect((await fetch(`${a.url}/healthz`)).status).toBe(200);
    const org = await newOrganization(a.url, 'API only');
    const store = await createDatastore(a, org.apiKey);
    const created = await createText(a, org.apiKey, store, 'Waiting', 'Nobody processes this in an API-only process.');
    expect(created.status).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    expect((await datasource(a, org.apiKey, created.body.id))?.status).toBe('unsynched');
    expect(await sql(a, `select state from pgboss.job where data->>'datasourceId' = ?`, [created.body.id])).toEqual([{ state: 'created' }]);

    if (ON_POSTGRES) {
      // `npm run worker` on the same database picks it up.
      const worker = spawnService('npm', ['run', '--silent', 'worker'], { DATABASE_URL: a.databaseUrl, DATA_DIR: a.config.dataDir, PORT: String(await freePort()) }, { group: true });
      try {
        await worker.waitForLog('workers started', 45_000);
        expect((await settled(a, org.apiKey, created.body.id)).status).toBe('synched');
      } finally {
        signal(worker.child, 'SIGTERM');
        await worker.exited;
        await waitFor(async () => !groupAlive(worker.child), 20_000, 'the worker to stop');
      }
    }
  }, 60_000);

  it('npm run worker starts workers without HTTP, says so, and stops on SIGTERM', async () => {
    const scripts = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts;
    expect(scripts.worker).toMatch(/^ROLE=worker (exec )?node .*src\/main\.ts$/);
    const env = ON_POSTGRES ? { DATABASE_URL: (apps[0] ?? (await app())).databaseUrl } : { DATABASE_URL: 'pglite://memory' };
    const [npmPort, nodePort] = [await freePort(), await freePort()];
    // The npm script (npm, its shell and node: a process group), and node as the script runs it.
    const viaNpm = spawnService('npm', ['run', '--silent', 'worker'], { ...env, PORT: String(npmPort) }, { group: true });
    const direct = spawnMain({ ...env, ROLE: 'worker', PORT: String(nodePort) });

    for (const [worker, port] of [[viaNpm, npmPort], [direct, nodePort]] as const) {
      const line = await worker.waitForLog('workers started', 45_000);
      expect(line).toMatchObject({ level: 'info', role: 'worker', http: false, database: ON_POSTGRES ? 'postgres' : 'pglite' });
      expect(line).not.toHaveProperty('url');
      expect(worker.logs().filter((l) => l.msg === 'listening')).toEqual([]);
      expect(await connects(port)).toBe(false);
    }

    signal(viaNpm.child, 'SIGTERM');
    await viaNpm.exited;
    await waitFor(async () => !groupAlive(viaNpm.child), 20_000, 'npm run worker to stop');
    // Its last lines may still be in the pipe when the process is gone: read until they arrive.
    await waitFor(async () => viaNpm.logs().some((l) => l.msg === 'shutting down') || undefined, 5_000, 'the "shutting down" line of npm run worker');

    signal(direct.child, 'SIGTERM');
    expect(await direct.exited).toEqual({ code: 0, signal: null });
    await waitFor(async () => direct.logs().some((l) => l.msg === 'shutting down') || undefined, 5_000, 'the "shutting down" line of the worker');
  }, 60_000);
});
