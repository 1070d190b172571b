/**
 * What an operator reads: one access line per request with its id, the same id in the response
 * header, in every line written while serving it and in a 500's body; no secret in the log;
 * model endpoint failures with status and latency; errors nothing caught.
 */
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installProcessGuard } from '../src/http/process-guard.ts';
import { withLogContext } from '../src/logger.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { memoryLog } from './support/log.ts';
import { makeWav } from './support/media.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';

let model: OpenAiTestServer;
let app: TestApp;
let log: ReturnType<typeof memoryLog>;
let org: Awaited<ReturnType<typeof newOrganization>>;

beforeAll(async () => {
  model = await startOpenAiTestServer();
  log = memoryLog();
  app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key', TRANSCRIPTION_MODEL: 'whisper-test' }, { logger: log.logger });
  org = await newOrganization(app.url, 'Logging');
}, 120_000);

afterAll(async () => {
  await app?.close();
  await model?.close();
});

const accessLines = (requestId: string) => log.lines().filter((l) => l.msg === 'request' && l.requestId === requestId);

describe('request ids and access lines', () => {
  it('writes one access line per request, with the id the caller sent, returned in the header', async () => {
    const res = await http('GET', `${app.url}/healthz`, { headers: { 'x-request-id': 'trace-abc-123' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('trace-abc-123');
    await new Promise((r) => setTimeout(r, 20)); // the line is written when the response closes
    const lines = accessLines('trace-abc-123');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', method: 'GET', path: '/healthz', status: 200, requestId: 'trace-abc-123' });
    expect(lines[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(lines[0]!.bytes).toBeGreaterThan(0);
  });

  it('generates an id when none or an unusable one is sent, on REST, GraphQL and unknown paths alike', async () => {
    const tooLong = 'x'.repeat(129);
    for (const [url, headers] of [
      [`${app.api}/agents/@nobody`, {}],
      [`${app.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, { 'apollo-require-preflight': '1', 'x-request-id': tooLong }],
      [`${app.url}/nothing/here`, { 'x-request-id': 'caf\u00e9-is-not-ascii' }],
    ] as const) {
      const res = await http('GET', url, { headers });
      const id = res.headers.get('x-request-id');
      expect(id, url).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      await new Promise((r) => setTimeout(r, 20));
      expect(accessLines(id!), url).toHaveLength(1);
    }
    expect(log.text()).not.toContain(tooLong);
  });

  it('keeps the query string (where links and tokens travel) out of the access line', async () => {
    await http('GET', `${app.url}/healthz?token=very-secret-value`, { headers: { 'x-request-id': 'no-query' } });
    await new Promise((r) => setTimeout(r, 20));
    expect(accessLines('no-query')[0]!.path).toBe('/healthz');
    expect(log.text()).not.toContain('very-secret-value');
  });
});

describe('secrets', () => {
  it('never writes a Bearer key, a session token or a sign-in password', async () => {
    const password = 'correct horse battery';
    // A sign-in that fails and one that works, a request with a key, and one with a bad key.
    await gql(app.url, `mutation($e: String!) { login(input: { email: $e, password: "wrong-password-here" }) { token } }`, { e: org.email });
    const login = await gql(app.url, `mutation($e: String!, $p: String!) { login(input: { email: $e, password: $p }) { token } }`, { e: org.email, p: password });
    expect(login.data?.login.token).toBeTruthy();
    await http('GET', `${app.api}/agents/@someone`, { token: org.apiKey });
    await http('GET', `${app.api}/agents/@someone`, { token: 'ak_invalid-key-that-is-not-real' });
    await http('GET', `${app.api}/agents/@someone`, { headers: { cookie: `ab_session=${org.session}` } });
    await new Promise((r) => setTimeout(r, 20));
    const text = log.text();
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [org.apiKey, org.session, login.data.login.token, password, 'wrong-password-here', 'ak_invalid-key-that-is-not-real']) {
      expect(text).not.toContain(secret);
    }
  });

  it('redacts secrets a call site passes in its fields, at any usual depth', () => {
    const mem = memoryLog();
    mem.logger.info('incoming', {
      headers: { authorization: 'Bearer ak_live_123', cookie: 'agentbase_session=s3cr3t' },
      body: { input: { email: 'a@b.c', password: 'hunter2-hunter2' } },
      apiKey: 'ak_top_level',
      token: 'tok_123',
    });
    const text = mem.text();
    for (const secret of ['ak_live_123', 's3cr3t', 'hunter2-hunter2', 'ak_top_level', 'tok_123']) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
    expect(mem.lines()[0]!.body.input.email).toBe('a@b.c');
  });
});

describe('model endpoint failures', () => {
  it('logs the failure with status, latency and the request id, and answers 502', async () => {
    const agent = (await gql(app.url, `mutation { createAgent(input: { name: "Logged", visibility: public }) { id } }`, {}, { token: org.apiKey })).data.createAgent.id;
    model.failNext('/v1/chat/completions', 500, 2); // the first attempt and the client's one retry
    const res = await http('POST', `${app.api}/agents/${agent}/query`, { body: { query: 'fail please' }, headers: { 'x-request-id': 'model-fails' } });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('UPSTREAM_FAILED');
    const failure = log.lines().find((l) => l.msg === 'model endpoint failed' && l.requestId === 'model-fails');
    expect(failure).toMatchObject({ level: 'warn', endpoint: 'chat', status: 500 });
    expect(failure!.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('logs a failing speech endpoint (universal processor) with status and latency, and answers 502', async () => {
    const agent = (await gql(app.url, `mutation { createAgent(input: { name: "Listens", visibility: public }) { id } }`, {}, { token: org.apiKey })).data.createAgent.id;
    model.failNext('/v1/audio/transcriptions', 503, 1);
    const res = await http('POST', `${app.api}/agents/${agent}/universal`, {
      body: { fileBuffer: makeWav(1).toString('base64'), fileType: 'wav' },
      headers: { 'x-request-id': 'speech-fails' },
    });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('UPSTREAM_FAILED');
    const failure = log.lines().find((l) => l.msg === 'model endpoint failed' && l.requestId === 'speech-fails');
    expect(failure).toMatchObject({ level: 'warn', endpoint: 'transcription', model: 'whisper-test', status: 503 });
    expect(failure!.latencyMs).toBeGreaterThanOrEqual(0);
  });
});

describe('internal errors', () => {
  it('answers 500 with the request id, and logs the cause under the same id', async () => {
    // The database loses a table under the running server: every agent read fails inside.
    await app.db.orm.em.getConnection().execute('drop table agents cascade');
    const res = await http('GET', `${app.api}/agents/@anything`, { headers: { 'x-request-id': 'broken-1' } });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'INTERNAL', message: 'Internal error.', details: { requestId: 'broken-1' } } });
    const cause = log.lines().find((l) => l.msg === 'internal error' && l.requestId === 'broken-1');
    expect(cause?.level).toBe('error');
    expect(cause?.error?.message).toMatch(/agents/);
  });
});

describe('the process guard', () => {
  it('keeps serving after an error from a request, exits 1 after one from nowhere', () => {
    const mem = memoryLog();
    const proc = new EventEmitter();
    const exits: number[] = [];
    installProcessGuard(proc as never, mem.logger, (code) => exits.push(code));
    withLogContext({ requestId: 'req-7' }, () => proc.emit('uncaughtException', new Error('in a request')));
    withLogContext({ requestId: 'req-8' }, () => proc.emit('unhandledRejection', new Error('a promise')));
    proc.emit('unhandledRejection', new Error('a promise from nowhere'));
    expect(exits).toEqual([]);
    proc.emit('uncaughtException', new Error('from nowhere'));
    expect(exits).toEqual([1]);
    const lines = mem.lines();
    expect(lines.map((l) => [l.requestId ?? null, l.error.message])).toEqual([
      ['req-7', 'in a request'],
      ['req-8', 'a promise'],
      [null, 'a promise from nowhere'],
      [null, 'from nowhere'],
    ]);
  });

  it('in a real process: a request whose callback throws is logged with its id and the server keeps answering', async () => {
    // A node process with the real guard on the real `process` and the real request wrapper.
    const root = path.resolve(import.meta.dirname, '..');
    const script = `
      import http from 'node:http';
      import { AsyncResource } from 'node:async_hooks';
      import { createLogger } from './src/logger.ts';
      import { installProcessGuard } from './src/http/process-guard.ts';
      import { withRequestLog } from './src/http/request-log.ts';
      const logger = createLogger('info');
      installProcessGuard(process, logger, (code) => process.exit(code));
      // Bound to the start-up context: its timer belongs to no request.
      const outside = AsyncResource.bind(() => setTimeout(() => { throw new Error('bug outside requests'); }, 1));
      const server = http.createServer(withRequestLog(logger, (req, res) => {
        if (req.url === '/throw') setTimeout(() => { throw new Error('bug in a request callback'); }, 1);
        if (req.url === '/exit') { server.close(); outside(); }
        res.end('ok');
      }));
      server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
    `;
    const child = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', '--input-type=module', '-e', script], { cwd: root });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const port = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (d) => resolve(String(d).trim()));
      child.once('close', () => reject(new Error(stderr)));
    });
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/throw`, { headers: { 'x-request-id': 'boom-1' } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    expect((await fetch(`${base}/still-there`)).status).toBe(200);
    await fetch(`${base}/exit`, { headers: { 'x-request-id': 'last' } });
    expect(await exited).toBe(1);
    const lines = stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
    expect(lines.find((l) => l.error?.message === 'bug in a request callback')).toMatchObject({ level: 'error', requestId: 'boom-1' });
    const outside = lines.find((l) => l.error?.message === 'bug outside requests');
    expect(outside?.level).toBe('error');
  }, 30_000);
});
