/**
 * GET /metrics as Prometheus scrapes it: known traffic is made through the real clients (REST,
 * GraphQL, an upload that ingests, answers streamed from the local OpenAI-compatible server),
 * then the text is scraped and parsed, and the counts a dashboard would show are checked.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { createDatastore, settled, upload } from './support/ingest.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { instrumentChat } from '../src/metrics/instrument.ts';
import { Metrics } from '../src/metrics/metrics.ts';
import { createChatModel } from '../src/providers/chat.ts';
import { freePort } from './support/process.ts';
import { readSse, summarize } from './support/sse.ts';
import { waitFor } from './support/wait.ts';

let model: OpenAiTestServer;
let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let agent: string;
let store: string;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format's sample lines (comments and blank lines skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`Not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `labels`. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

async function scrape(url = app.url, token?: string): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await res.text());
}

const ask = (body: Record<string, unknown>) => fetch(`${app.api}/agents/${agent}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  model = await startOpenAiTestServer();
  app = await startTestApp({
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'test-key',
    EMBEDDING_MODEL: 'text-embedding-3-small',
    EMBEDDING_DIMENSION: '256',
    MODEL_3_5_TURBO: 'gpt-metrics-test',
    RATE_LIMIT_VISITOR_PER_MINUTE: '1000',
    JOB_RETRY_DELAY_SECONDS: '1',
  });
  org = await newOrganization(app.url, 'Metrics');
  store = await createDatastore(app, org.apiKey, 'public');
  const created = await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Counter', visibility: 'public', datastoreIds: [store] } }, { token: org.apiKey });
  agent = created.data.createAgent.id;
}, 120_000);

afterAll(async () => {
  await app?.close();
  await model?.close();
});

describe('GET /metrics after known traffic', () => {
  it('times requests under their route template, never the raw path, with method and status', async () => {
    const before = await scrape();
    const route = { route: '/api/agents/:id', method: 'GET' };
    for (let i = 0; i < 3; i++) expect((await http('GET', `${app.api}/agents/${agent}`)).status).toBe(200);
    expect((await http('GET', `${app.api}/agents/no-such-agent`)).status).toBe(404);
    expect((await fetch(`${app.url}/no/such/${agent}/path`)).status).toBe(404);
    const after = await scrape();
    const count = (s: Sample[], labels: Record<string, string>) => value(s, 'http_request_duration_seconds_count', labels);
    expect(count(after, { ...route, status: '200' }) - count(before, { ...route, status: '200' })).toBe(3);
    expect(count(after, { ...route, status: '404' }) - count(before, { ...route, status: '404' })).toBe(1);
    expect(count(after, { route: 'unmatched', status: '404' }) - count(before, { route: 'unmatched', status: '404' })).toBe(1);
    // The scrape itself is a route, as are the fixed paths.
    expect(count(after, { route: '/metrics', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(1);
    // No label anywhere carries an id.
    for (const s of after) for (const v of Object.values(s.labels)) expect(v).not.toContain(agent);
    expect(value(after, 'http_request_duration_seconds_bucket', { ...route, status: '200', le: '+Inf' })).toBe(count(after, { ...route, status: '200' }));
  });

  it('counts GraphQL operations by root field and type, not by the client-chosen operation name', async () => {
    const before = await scrape();
    const res = await gql(app.url, `query MyDashboardNumber${Date.now()} { agents { nodes { id } } whoami: me { role } }`, {}, { token: org.apiKey });
    expect(res.errors).toBeUndefined();
    const renamed = await gql(app.url, `mutation Rename { updateAgent(id: "${agent}", input: { name: "Counter 2", description: "Counts" }) { id } }`, {}, { token: org.apiKey });
    expect(renamed.errors).toBeUndefined();
    // An operation that fails validation never ran: not counted.
    expect((await gql(app.url, `query { agents { noSuchField } }`, {}, { token: org.apiKey })).errors).toBeDefined();
    const after = await scrape();
    const op = (s: Sample[], labels: Record<string, string>) => value(s, 'graphql_operations_total', labels);
    expect(op(after, { type: 'query', field: 'agents' }) - op(before, { type: 'query', field: 'agents' })).toBe(1);
    expect(op(after, { type: 'query', field: 'me' }) - op(before, { type: 'query', field: 'me' })).toBe(1);
    expect(op(after, { type: 'mutation', field: 'updateAgent' }) - op(before, { type: 'mutation', field: 'updateAgent' })).toBe(1);
    expect(after.some((s) => Object.values(s.labels).some((v) => v.startsWith('MyDashboardNumber') || v === 'whoami' || v === 'Rename'))).toBe(false);
    expect(value(after, 'http_request_duration_seconds_count', { route: '/graphql', method: 'POST', status: '200' })).toBeGreaterThanOrEqual(2);
  });

  it('counts an upload through ingestion: job states, duration, embedding calls on the endpoint', async () => {
    const before = await scrape();
    const sent = await upload(app, org.apiKey, store, { name: 'notes.txt', type: 'text/plain', data: 'The metrics test counts this sentence about lighthouses and tides.' });
    expect(sent.status).toBe(200);
    expect((await settled(app, org.apiKey, sent.body.id)).status).toBe('synched');
    let after: Sample[] = [];
    // The job's end is recorded by the worker just after the datasource is marked synched.
    await waitFor(async () => {
      after = await scrape();
      return value(after, 'job_duration_seconds_count', { queue: 'ingest-datasource', outcome: 'completed' }) > value(before, 'job_duration_seconds_count', { queue: 'ingest-datasource', outcome: 'completed' });
    }, 10_000, 'the job duration to be recorded');
    expect(value(after, 'jobs', { queue: 'ingest-datasource', state: 'completed' }) - value(before, 'jobs', { queue: 'ingest-datasource', state: 'completed' })).toBe(1);
    expect(value(after, 'jobs', { queue: 'ingest-datasource', state: 'active' })).toBe(0);
    expect(value(after, 'jobs_queued', { queue: 'ingest-datasource' })).toBe(0);
    // Every state is reported, zero or not, for both queues.
    for (const queue of ['ingest-datasource', 'form-webhook']) for (const state of ['created', 'retry', 'active', 'completed', 'cancelled', 'failed']) expect(after.some((s) => s.name === 'jobs' && s.labels.queue === queue && s.labels.state === state)).toBe(true);
    expect(value(after, 'job_retries_total', { queue: 'ingest-datasource' })).toBe(value(before, 'job_retries_total', { queue: 'ingest-datasource' }));
    const embedded = (s: Sample[]) => value(s, 'embedding_calls_total', { provider: 'endpoint', kind: 'documents', outcome: 'ok' });
    expect(embedded(after) - embedded(before)).toBeGreaterThanOrEqual(1);
    expect(value(after, 'embedding_texts_total', { provider: 'endpoint' })).toBeGreaterThan(value(before, 'embedding_texts_total', { provider: 'endpoint' }));
    expect(value(after, 'embedding_duration_seconds_count', { provider: 'endpoint', kind: 'documents' })).toBe(embedded(after));
  }, 60_000);

  it('counts a failed job attempt, its retry and the failed embedding call', async () => {
    const before = await scrape();
    // The embeddings client tries 3 times; then the job attempt fails and pg-boss retries it.
    model.failNext('/v1/embeddings', 503, 3);
    const sent = await upload(app, org.apiKey, store, { name: 'retry.txt', type: 'text/plain', data: 'A sentence that needs a second attempt to be embedded.' });
    expect(sent.status).toBe(200);
    expect((await settled(app, org.apiKey, sent.body.id, 60_000)).status).toBe('synched');
    let after: Sample[] = [];
    await waitFor(async () => {
      after = await scrape();
      return value(after, 'job_duration_seconds_count', { queue: 'ingest-datasource', outcome: 'completed' }) > value(before, 'job_duration_seconds_count', { queue: 'ingest-datasource', outcome: 'completed' });
    }, 10_000, 'the retried job to be recorded');
    const diff = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(diff('job_duration_seconds_count', { queue: 'ingest-datasource', outcome: 'failed' })).toBe(1);
    expect(diff('job_retries_total', { queue: 'ingest-datasource' })).toBe(1);
    expect(diff('embedding_calls_total', { provider: 'endpoint', kind: 'documents', outcome: 'error' })).toBe(1);
  }, 90_000);

  it('counts model calls, time to first token and tokens in and out of an answer', async () => {
    const before = await scrape();
    model.setChatReply(() => 'Lighthouses warn ships at night.');
    const res = await http('POST', `${app.api}/agents/${agent}/query`, { body: { query: 'What do lighthouses do?' } });
    expect(res.status).toBe(200);
    const after = await scrape();
    const m = { model: 'gpt-metrics-test', mode: 'stream' };
    expect(value(after, 'model_calls_total', { ...m, outcome: 'ok' }) - value(before, 'model_calls_total', { ...m, outcome: 'ok' })).toBe(1);
    expect(value(after, 'model_first_token_seconds_count', m) - value(before, 'model_first_token_seconds_count', m)).toBe(1);
    const chat = model.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!;
    expect(chat.body.stream).toBe(true);
    const tokens = (s: Sample[], direction: string) => value(s, 'model_tokens_total', { model: 'gpt-metrics-test', direction });
    // The test server counts one token per word piece of its reply: "Lighthouses warn ships at night." is more than 4.
    expect(tokens(after, 'out') - tokens(before, 'out')).toBeGreaterThanOrEqual(5);
    expect(tokens(after, 'in') - tokens(before, 'in')).toBeGreaterThan(10);
    // The query was embedded on the endpoint to search the datastore.
    expect(value(after, 'embedding_calls_total', { provider: 'endpoint', kind: 'query', outcome: 'ok' })).toBeGreaterThan(value(before, 'embedding_calls_total', { provider: 'endpoint', kind: 'query', outcome: 'ok' }));
  });

  it('counts a failing model endpoint by kind of error', async () => {
    const before = await scrape();
    // LangChain retries once: both attempts fail.
    model.failNext('/v1/chat/completions', 503, 2);
    const res = await http('POST', `${app.api}/agents/${agent}/query`, { body: { query: 'Is the model up?' } });
    expect(res.status).toBe(502);
    const after = await scrape();
    const errors = (s: Sample[], kind: string) => value(s, 'model_errors_total', { model: 'gpt-metrics-test', kind });
    expect(errors(after, 'http_5xx') - errors(before, 'http_5xx')).toBe(1);
    expect(value(after, 'model_calls_total', { outcome: 'error' }) - value(before, 'model_calls_total', { outcome: 'error' })).toBe(1);
  });

  it('counts an endpoint that cannot be reached as a network error', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const closed = await freePort(); // nothing listens there
    const chat = instrumentChat(createChatModel({ openai: { baseUrl: `http://127.0.0.1:${closed}/v1`, apiKey: 'k' } }), metrics)!;
    await expect(chat.complete([{ role: 'user', content: 'Anyone there?' }], { model: 'gpt-unreachable' })).rejects.toThrow(/Connection error/);
    const samples = parse((await metrics.scrape()).body);
    expect(value(samples, 'model_errors_total', { model: 'gpt-unreachable', kind: 'network' })).toBe(1);
    expect(value(samples, 'model_calls_total', { model: 'gpt-unreachable', mode: 'complete', outcome: 'error' })).toBe(1);
  }, 30_000);

  it('shows a stream as open while it is, under its route, and closed after', async () => {
    model.setChatReply(() => 'Tides follow the moon.');
    model.setStreamTiming({ firstTokenDelayMs: 1500 });
    try {
      const res = await ask({ query: 'What moves the tides?', streaming: true });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const open = await scrape();
      expect(value(open, 'http_open_streams', { route: '/api/agents/:id/query' })).toBe(1);
      expect(summarize(await readSse(res)).last).toBe('[DONE]');
    } finally {
      model.setStreamTiming({ firstTokenDelayMs: 0 });
    }
    await waitFor(async () => value(await scrape(), 'http_open_streams', { route: '/api/agents/:id/query' }) === 0, 5_000, 'the stream to be counted closed');
    const after = await scrape();
    expect(value(after, 'http_request_duration_seconds_count', { route: '/api/agents/:id/query', method: 'POST', status: '200' })).toBeGreaterThanOrEqual(2);
  });

  it('counts a GraphQL subscription over graphql-sse as an operation and an open stream', async () => {
    const client = createClient({ url: `${app.url}/graphql/stream`, headers: { authorization: `Bearer ${org.apiKey}` } });
    const before = await scrape();
    model.setStreamTiming({ firstTokenDelayMs: 1000 });
    try {
      const events: unknown[] = [];
      const done = new Promise<void>((resolve, reject) =>
        client.subscribe(
          { query: `subscription Watch($id: ID!, $input: AgentQueryInput!) { agentQueryStream(id: $id, input: $input) { type text } }`, variables: { id: agent, input: { query: 'Tell me about tides' } } },
          { next: (e) => void events.push(e), error: reject, complete: resolve },
        ),
      );
      await waitFor(async () => value(await scrape(), 'http_open_streams', { route: '/graphql/stream' }) === 1, 5_000, 'the graphql-sse stream to be counted');
      await done;
      expect(events.length).toBeGreaterThan(0);
    } finally {
      model.setStreamTiming({ firstTokenDelayMs: 0 });
      client.dispose();
    }
    const after = await scrape();
    const op = (s: Sample[]) => value(s, 'graphql_operations_total', { type: 'subscription', field: 'agentQueryStream' });
    expect(op(after) - op(before)).toBe(1);
  });

  it('is no browser\'s business and not rate limited: no CORS headers, and scraped freely', async () => {
    const res = await fetch(`${app.url}/metrics`, { headers: { origin: 'https://dashboard.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('ratelimit-limit')).toBeNull();
    const scrapes = await Promise.all(Array.from({ length: 40 }, () => fetch(`${app.url}/metrics`)));
    expect(scrapes.map((r) => r.status)).toEqual(Array(40).fill(200));
    await Promise.all(scrapes.map((r) => r.text()));
  });

  it('reports the process metrics, the database pool on PostgreSQL and the embedded database\'s memory on PGlite', async () => {
    const samples = await scrape();
    expect(value(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(value(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    if (app.config.database.kind === 'postgres') {
      expect(value(samples, 'db_pool_connections', { state: 'max' })).toBe(20);
      expect(value(samples, 'db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
      expect(samples.some((s) => s.name === 'db_pool_connections' && s.labels.state === 'waiting')).toBe(true);
      // The database's memory is the server's, not this process's.
      expect(samples.some((s) => s.name === 'db_embedded_memory_bytes')).toBe(false);
    } else {
      // PGlite is one in-process connection: no pool to report (docs/operations.md says so).
      expect(samples.some((s) => s.name === 'db_pool_connections')).toBe(false);
      // Its memory holds at least its shared_buffers (PGLITE_SHARED_BUFFERS_MB, 32 by default) and is part of the process's.
      expect(value(samples, 'db_embedded_memory_bytes')).toBeGreaterThan(32 * 1024 * 1024);
      expect(value(samples, 'db_embedded_memory_bytes')).toBeLessThan(value(samples, 'process_resident_memory_bytes'));
    }
  });
});

describe('METRICS_TOKEN, METRICS_PORT and METRICS_ENABLED', () => {
  let apart: TestApp;
  let off: TestApp;
  let metricsPort: number;
  let other: string;

  beforeAll(async () => {
    metricsPort = await freePort();
    other = `http://127.0.0.1:${metricsPort}`;
    [apart, off] = await Promise.all([startTestApp({ METRICS_PORT: String(metricsPort), METRICS_TOKEN: 'scrape-secret-1' }), startTestApp({ METRICS_ENABLED: 'false' })]);
  }, 180_000);
  afterAll(async () => {
    await apart?.close();
    await off?.close();
  });

  it('with METRICS_TOKEN, answers 401 JSON without the bearer token or with a wrong one, 200 with it', async () => {
    for (const headers of <Record<string, string>[]>[{}, { authorization: 'Bearer wrong' }, { authorization: 'Bearer scrape-secret-1x' }, { authorization: 'scrape-secret-1' }]) {
      const res = await fetch(`${other}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(((await res.json()) as any).error.code).toBe('UNAUTHENTICATED');
    }
    const samples = await scrape(other, 'scrape-secret-1');
    expect(value(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('with METRICS_PORT, serves /metrics on that port only; the main port answers 404', async () => {
    const main = await fetch(`${apart.url}/metrics`, { headers: { authorization: 'Bearer scrape-secret-1' } });
    expect(main.status).toBe(404);
    expect(((await main.json()) as any).error.code).toBe('NOT_FOUND');
    const samples = await scrape(other, 'scrape-secret-1');
    // The main port's 404 for /metrics is in the counts served on the other port.
    expect(value(samples, 'http_request_duration_seconds_count', { route: '/metrics', method: 'GET', status: '404' })).toBe(1);
    const elsewhere = await fetch(`${other}/graphql`, { method: 'POST' });
    expect(elsewhere.status).toBe(404);
  });

  it('labels the shipped embedding model local', async () => {
    const owner = await newOrganization(apart.url, 'Local');
    const id = await createDatastore(apart, owner.apiKey, 'private');
    const res = await http('POST', `${apart.api}/datastores/${id}/query`, { token: owner.apiKey, body: { query: 'anything at all' } });
    // The body in the failure message: a 502 once seen here on PostgreSQL under CI's load said nothing more.
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const samples = await scrape(other, 'scrape-secret-1');
    expect(value(samples, 'embedding_calls_total', { provider: 'local', kind: 'query', outcome: 'ok' })).toBe(1);
    expect(value(samples, 'embedding_duration_seconds_count', { provider: 'local', kind: 'query' })).toBe(1);
    expect(value(samples, 'embedding_calls_total', { provider: 'endpoint' })).toBe(0);
  }, 120_000);

  it('METRICS_ENABLED=false serves nothing', async () => {
    expect((await fetch(`${off.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${off.url}/healthz`)).status).toBe(200);
  });
});

describe('metrics configuration', () => {
  it('lists a bad METRICS_PORT, one equal to PORT, a bad METRICS_TOKEN and METRICS_ENABLED with the other problems', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ METRICS_PORT: 'ninety', METRICS_ENABLED: 'maybe', METRICS_TOKEN: 'has space' })).toEqual([
      'METRICS_ENABLED must be true or false (got "maybe")',
      'METRICS_PORT must be a whole number from 1 to 65535 (got "ninety")',
      'METRICS_TOKEN must be printable ASCII without spaces (it is sent as a bearer token)',
    ]);
    expect(problems({ PORT: '8080', METRICS_PORT: '8080' })[0]).toMatch(/^METRICS_PORT must differ from PORT/);
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 't0ken' }).metrics).toEqual({ enabled: true, token: 't0ken', port: 9464 });
    expect(loadConfig({}).metrics).toEqual({ enabled: true, token: null, port: null });
  });
});
