/**
 * Optional reranking (RERANK_URL): the real service, the real database, and a local stand-in
 * that speaks the `/rerank` protocol (test/support/rerank-server.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { createDatastore, settled } from './support/ingest.ts';
import { memoryLog } from './support/log.ts';
import { startRerankTestServer, type RerankTestServer } from './support/rerank-server.ts';

let reranker: RerankTestServer;
let app: TestApp;
let key: string;
const log = memoryLog('info');
let store: string;

const NOTES = [
  'The museum opens at ten in the morning and closes at five in the afternoon.',
  'Tickets for adults cost fourteen dollars; children under twelve enter free.',
  'Guided tours of the museum leave from the entrance hall at eleven and at three.',
  'The café on the top floor serves lunch from noon until three.',
];

beforeAll(async () => {
  reranker = await startRerankTestServer();
  app = await startTestApp({ RERANK_URL: reranker.url, RERANK_MODEL: 'rerank-test-1', RERANK_API_KEY: 'rerank-key' }, { logger: log.logger });
  key = (await newOrganization(app.url, 'Rerank')).apiKey;
  store = await createDatastore(app, key);
  for (const [i, text] of NOTES.entries()) {
    const res = await http('POST', `${app.api}/datasources`, { token: key, body: { datastoreId: store, type: 'text', name: `note-${i}`, text } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await settled(app, key, res.body.id, 60_000)).status).toBe('synched');
  }
}, 120_000);

afterAll(async () => {
  await app?.close();
  await reranker?.close();
});

const query = (body: unknown) => http('POST', `${app.api}/datastores/${store}/query`, { token: key, body });

describe('reranking with RERANK_URL', () => {
  it('sends the candidates in the /rerank shape and returns them in the order it answers', async () => {
    // The stand-in puts the café first whatever is asked: an order the search itself would not give.
    reranker.setScorer((_q, documents) => documents.map((d) => (d.includes('café') ? 1 : 0.5 - documents.indexOf(d) / 100)));
    const before = reranker.requests.length;
    const res = await query({ query: 'When does the museum open?', topK: 2 });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    expect(res.body[0].text).toBe(NOTES[3]);
    const sent = reranker.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.authorization).toBe('Bearer rerank-key');
    expect(sent[0]!.body).toMatchObject({ model: 'rerank-test-1', query: 'When does the museum open?', top_n: 2 });
    // More candidates than asked for, so the reranker has something to choose from.
    expect(sent[0]!.body.documents.sort()).toEqual([...NOTES].sort());
    // The second is the search's own best among the rest: the opening hours.
    expect(res.body[1].text).toBe(NOTES[0]);
    // score stays the search's relevance: the reranker orders, it does not rescale.
    for (const f of res.body) expect(f.score).toBeGreaterThanOrEqual(0), expect(f.score).toBeLessThanOrEqual(1);
  });

  it('minScore is applied before reranking: nothing left, nothing sent', async () => {
    const before = reranker.requests.length;
    const res = await query({ query: 'Which composer wrote the magic flute?', minScore: 0.99 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(reranker.requests.length).toBe(before);
  });

  it('a failing rerank endpoint is a 502 UPSTREAM_FAILED JSON error, logged as a model endpoint failure', async () => {
    reranker.failWith(500);
    try {
      const res = await http('POST', `${app.api}/datastores/${store}/query`, { token: key, body: { query: 'When does the museum open?' }, headers: { 'x-request-id': 'rerank-fails' } });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('UPSTREAM_FAILED');
      expect(res.body.error.message).toMatch(/rerank endpoint answered 500/);
      const failure = log.lines().find((l) => l.msg === 'model endpoint failed' && l.requestId === 'rerank-fails');
      expect(failure).toMatchObject({ level: 'warn', endpoint: 'rerank', model: 'rerank-test-1', status: 500 });
      expect(failure!.latencyMs).toBeGreaterThanOrEqual(0);
    } finally {
      reranker.failWith(null);
    }
  });

  it('a reranker answer naming a document that was not sent is refused, not trusted', async () => {
    reranker.setScorer((_q, documents) => [...documents.map(() => 0), 1]);
    const res = await query({ query: 'When does the museum open?' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('UPSTREAM_FAILED');
  });
});
