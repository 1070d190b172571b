/**
 * Resident memory of the service at rest after start-up, started exactly as package.json's
 * `start` script starts it, with an embedding endpoint (the configuration of issue 19's
 * figures): the embedded database by default, PostgreSQL when TEST_DATABASE_URL is set. The
 * bounds are docs/operations.md#memory's targets plus headroom for a busy CI machine; the old
 * start-up (a TypeScript loader thread, 128 MB of PGlite buffers) exceeded both. The first
 * query after start-up must still work: nothing it needs may have been left out of start-up.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from './support/app.ts';
import { createTestDatabase } from './support/app.ts';
import { endpointEnv } from './support/service.ts';
import { http as call, newOrganization } from './support/client.ts';
import { createDatastore, settled, upload } from './support/ingest.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { freePort, killAll, NODE, spawnService, START_ARGS, type ServiceProcess } from './support/process.ts';
import { CORPUS_QUESTIONS, PARAGRAPHS_PER_FILE, paragraphFile } from './support/paragraphs.ts';
import { watchPeak } from './support/resident.ts';
import { MIME } from './support/samples.ts';

const ON_POSTGRES = !!process.env.TEST_DATABASE_URL;
/**
 * Targets 450 MB (embedded) and 300 MB (PostgreSQL). Measured under load (docs/benchmarks.md#memory):
 * 180-210 MB on PostgreSQL (~400 before issue 19); 330-400 MB embedded on a first start (590-870
 * before the first start's initdb moved to a child process and LangChain and the compiler left start-up).
 */
const BOUND_MB = ON_POSTGRES ? 300 : 500;
/**
 * Issue 19's bound while its corpus is ingested and queried: 800 MB with the embedded database.
 * PostgreSQL has no target of its own; 600 MB is its full corpus's peak (347-380 MB under load,
 * 451-479 MB before V8's young generation was capped) plus headroom. Here a fifth of the corpus,
 * which takes seconds; bench:memory measures the whole of it.
 */
const CORPUS_BOUND_MB = ON_POSTGRES ? 600 : 800;
const CORPUS_FILES = 20;
const CORPUS_QUERIES = 100;
/** How long resident memory is watched once the service listens: PGlite's compiled code tiers up in these seconds. */
const WATCH_MS = 20_000;

const residentMb = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

describe(`memory after start-up (${ON_POSTGRES ? 'PostgreSQL' : 'embedded PGlite'}, embedding endpoint)`, () => {
  let embeddings: OpenAiTestServer;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let service: ServiceProcess;
  let app: Pick<TestApp, 'url' | 'api'>;

  beforeAll(async () => {
    embeddings = await startOpenAiTestServer({ embeddingDimension: 64 });
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentbase-memory-'));
    const port = await freePort();
    service = spawnService(NODE, START_ARGS, {
      PORT: String(port),
      DATA_DIR: dataDir,
      // The embedded default is a database on disk, as `npm start` makes it (not pglite://memory).
      ...(ON_POSTGRES ? { DATABASE_URL: database.url } : {}),
      ...endpointEnv(embeddings.url),
    });
    await service.waitForLog('listening', 150_000);
    app = { url: `http://127.0.0.1:${port}`, api: `http://127.0.0.1:${port}/api` };
  }, 180_000);

  afterAll(async () => {
    killAll();
    await embeddings?.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`stays under ${BOUND_MB} MB at rest`, async () => {
    // The lowest reading of the watch: at rest, past start-up's short-lived compiler peaks.
    let lowest = Infinity;
    for (let waited = 0; waited < WATCH_MS; waited += 1000) {
      lowest = Math.min(lowest, residentMb(service.child.pid!));
      // Only the lowest reading is asserted: once one is under the bound, later ones cannot fail it.
      if (lowest < BOUND_MB) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(lowest).toBeLessThan(BOUND_MB);
  }, 60_000);

  it('answers the first datastore query after start-up through the endpoint', async () => {
    const org = await newOrganization(app.url, 'Lean');
    const store = await createDatastore(app as TestApp, org.apiKey);
    const up = await upload(app as TestApp, org.apiKey, store, { name: 'kettle.txt', type: MIME.txt, data: 'The kettle boils water in three minutes.' });
    expect(up.status).toBe(200);
    expect((await settled(app as TestApp, org.apiKey, up.body.id)).status).toBe('synched');
    const before = embeddings.requests.filter((r) => r.path.endsWith('/embeddings')).length;
    const res = await call('POST', `${app.api}/datastores/${store}/query`, { token: org.apiKey, body: { query: 'how long does the kettle take?' } });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).toContain('three minutes');
    // The query's vector came from the configured endpoint, not from a model inside the process.
    expect(embeddings.requests.filter((r) => r.path.endsWith('/embeddings')).length).toBeGreaterThan(before);
  }, 120_000);

  it(`stays under ${CORPUS_BOUND_MB} MB, with its children, while ${CORPUS_FILES * PARAGRAPHS_PER_FILE} chunks are uploaded, ingested and queried`, async () => {
    const org = await newOrganization(app.url, 'Lean corpus');
    const store = await createDatastore(app as TestApp, org.apiKey);
    const peak = watchPeak(service.child.pid!);
    const ids: string[] = [];
    let next = 0;
    // Four at a time, as the benchmark's user uploads them.
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < CORPUS_FILES) {
        const i = next++;
        const up = await upload(app as TestApp, org.apiKey, store, { name: `file ${i}.txt`, type: MIME.txt, data: paragraphFile(i) });
        expect(up.status).toBe(200);
        ids.push(up.body.id);
      }
    }));
    for (const id of ids) {
      const done = await settled(app as TestApp, org.apiKey, id, 120_000);
      expect(done).toMatchObject({ status: 'synched', chunkCount: PARAGRAPHS_PER_FILE });
    }
    next = 0;
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < CORPUS_QUERIES) {
        const i = next++;
        const res = await call('POST', `${app.api}/datastores/${store}/query`, { token: org.apiKey, body: { query: CORPUS_QUESTIONS[i % CORPUS_QUESTIONS.length], topK: 4 } });
        expect(res.status).toBe(200);
        expect(JSON.stringify(res.body)).toContain('Section');
      }
    }));
    const highest = peak.stop();
    console.log(`memory-start (${ON_POSTGRES ? 'PostgreSQL' : 'PGlite'}): peak ${highest} MB while ${CORPUS_FILES * PARAGRAPHS_PER_FILE} chunks were ingested and queried`);
    expect(highest).toBeLessThan(CORPUS_BOUND_MB);
  }, 180_000);
});
