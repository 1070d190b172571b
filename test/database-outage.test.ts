/**
 * PostgreSQL going away while questions and uploads arrive, and coming back. The shared server is
 * never restarted (other test files use it): the service reaches it through a TCP proxy that
 * resets every connection and refuses new ones (cut), as a restarting server does, then lets
 * them through again (restore). The service is not restarted in between.
 *
 * On the embedded PGlite the database lives inside the process and cannot go away alone: the test
 * runs on PostgreSQL (TEST_DATABASE_URL), and on PGlite proves the error mapping that the outage
 * relies on, with the errors a lost connection really raises.
 */
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../src/db/unavailable.ts';
import { normalizeError } from '../src/graphql/errors.ts';
import { createTestDatabase, startTestApp, type TestApp } from './support/app.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { createDatastore, settled } from './support/ingest.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { readSse, summarize } from './support/sse.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { waitFor } from './support/wait.ts';
import { endpointEnv, FAST_RECOVERY } from './support/service.ts';

const SERVER = process.env.TEST_DATABASE_URL;

if (SERVER) {
  describe('PostgreSQL restarting under questions and uploads (through a TCP proxy)', () => {
    let proxy: TcpProxy;
    let app: TestApp;
    let model: OpenAiTestServer;
    let database: Awaited<ReturnType<typeof createTestDatabase>>;
    let org: Awaited<ReturnType<typeof newOrganization>>;
    let agent: string;
    let store: string;

    beforeAll(async () => {
      const server = new URL(SERVER);
      proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
      model = await startOpenAiTestServer();
      database = await createTestDatabase();
      const viaProxy = new URL(database.url);
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      app = await startTestApp({
        DATABASE_URL: viaProxy.toString(),
        ...endpointEnv(model.url),
        ...FAST_RECOVERY,
      });
      org = await newOrganization(app.url, 'Outage');
      store = await createDatastore(app, org.apiKey);
      agent = (await gql(app.url, `mutation { createAgent(input: { name: "O", visibility: public }) { id } }`, {}, { token: org.apiKey })).data.createAgent.id;
    }, 60_000);

    afterAll(async () => {
      await proxy?.restore();
      await app?.close();
      await database?.drop();
      await proxy?.close();
      await model?.close();
    });

    const ready = async () => (await fetch(`${app.url}/readyz`)).status;
    const ask = (query: string) => call('POST', `${app.api}/agents/${agent}/query`, { body: { query } });
    const createText = (name: string) => call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'text', name, text: `The ${name} document, with a sentence to index.` } });

    it('while it is down: not ready, clear 503s within a bounded time, an open stream ends with [ERROR]; afterwards everything works again and no job is lost', async () => {
      expect(await ready()).toBe(200);
      expect((await ask('before')).status).toBe(200);

      // An answer streaming slowly when the database goes; an upload accepted just before.
      model.setChatReply(() => Array.from({ length: 30 }, (_, i) => `w${i}`).join(' '));
      model.setStreamTiming({ tokenDelayMs: 40 });
      const streaming = fetch(`${app.api}/agents/${agent}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'stream', streaming: true }) });
      // Its job is embedding (the model holds the answer) when the database goes.
      model.setDelay('/v1/embeddings', 1500);
      const embedded = model.requests.filter((r) => r.path === '/v1/embeddings').length;
      const accepted = await createText('Accepted');
      expect(accepted.status).toBe(200);
      const res = await streaming;
      expect(res.status).toBe(200);
      await waitFor(async () => model.requests.filter((r) => r.path === '/v1/embeddings').length > embedded || undefined, 10_000, 'the job to be embedding');
      await proxy.cut();
      model.setDelay('/v1/embeddings', 0);

      // The stream open at the cut ends with [ERROR] (storing the answer needs the database).
      const { last } = summarize(await readSse(res));
      expect(last).toMatch(/^\[ERROR\]/);
      model.setStreamTiming({});
      model.setChatReply((b) => `You asked: ${b.messages.at(-1).content}`);

      expect(await ready()).toBe(503);
      const body = await (await fetch(`${app.url}/readyz`)).json();
      expect(body).toMatchObject({ status: 'unavailable', reason: 'database unreachable' });

      // Requests of every kind: REST read and write, a question, GraphQL. Each a 503 JSON error, quickly.
      const attempts = [
        () => ask('during'),
        () => createText('During'),
        () => call('POST', `${app.api}/datastores/${store}/query`, { token: org.apiKey, body: { query: 'anything' } }),
        async () => {
          const r = await gql(app.url, `{ datasourceProblems(first: 5) { nodes { id } } }`, {}, { token: org.apiKey });
          return { status: r.status, headers: r.headers, body: r.errors ? { error: { code: r.errors[0]!.extensions.code, message: r.errors[0]!.message } } : r.data };
        },
      ];
      for (const attempt of attempts) {
        const started = Date.now();
        const r = await attempt();
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(r.body?.error, JSON.stringify(r.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
        if (r.status !== 200) expect(r.status).toBe(503); // GraphQL errors travel in a 200 or its own status
      }

      // A public agent read just before is answered from the process's cache: still served.
      expect((await call('GET', `${app.api}/agents/${agent}`)).status).toBe(200);

      await proxy.restore();
      // Without restarting anything: ready again, answers, uploads, and the upload accepted before the cut ends synched.
      await waitFor(async () => (await ready()) === 200 || undefined, 20_000, '/readyz to be ready again');
      await waitFor(async () => (await ask('after')).status === 200 || undefined, 20_000, 'answers to work again');
      const after = await createText('After');
      expect(after.status).toBe(200);
      expect((await settled(app, org.apiKey, after.body.id, 60_000)).status).toBe('synched');
      expect((await settled(app, org.apiKey, accepted.body.id, 60_000)).status).toBe('synched');
    }, 120_000);
  });
} else {
  describe('PGlite: the database lives in the process; what an outage raises maps to 503', () => {
    const refused = () =>
      new Promise<unknown>((resolve) => {
        const s = net.createServer();
        s.listen(0, '127.0.0.1', async () => {
          const { port } = s.address() as net.AddressInfo;
          s.close(async () => {
            const client = new pg.Client({ host: '127.0.0.1', port, user: 'x', database: 'x', connectionTimeoutMillis: 2000 });
            resolve(await client.connect().then(() => null, (e: unknown) => e));
          });
        });
      });
    const reset = () =>
      new Promise<unknown>((resolve) => {
        // A server that accepts, then resets the connection mid-handshake: a restart under a live client.
        const s = net.createServer((socket) => socket.resetAndDestroy());
        s.listen(0, '127.0.0.1', async () => {
          const { port } = s.address() as net.AddressInfo;
          const client = new pg.Client({ host: '127.0.0.1', port, user: 'x', database: 'x' });
          client.on('error', () => {});
          resolve(await client.connect().then(() => null, (e: unknown) => e));
          s.close();
        });
      });

    it('a refused and a reset connection are SERVICE_UNAVAILABLE (503), a bad query is not', async () => {
      for (const error of [await refused(), await reset()]) {
        expect(error).toBeInstanceOf(Error);
        expect(isDatabaseUnavailable(error)).toBe(true);
        expect(normalizeError(error).error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'The database cannot be reached; try again shortly.' });
        expect(normalizeError(error).internal).toBe(false);
      }
      const syntax = Object.assign(new Error('syntax error at or near "selec"'), { code: '42601' });
      expect(isDatabaseUnavailable(syntax)).toBe(false);
      expect(normalizeError(syntax).error.code).toBe('INTERNAL');
    });
  });
}
