/**
 * On the embedded database, a request that needs no database is not held behind the statements
 * waiting for it (src/db/pglite-turns.ts). PGlite runs each statement on the service's own thread;
 * before, a queue of statements (the ingestion of many documents) ran as one block and a cached
 * agent read waited for all of it. Always on PGlite: this is how the embedded database is driven.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ DATABASE_URL: 'pglite://memory' });
}, 60_000);

afterAll(async () => {
  await app?.close();
});

it('answers a cached agent read while 300 statements wait for the embedded database', async () => {
  const org = await newOrganization(app.url, 'Turns');
  const created = await gql(app.url, `mutation { createAgent(input: { name: "Cached", visibility: public }) { id } }`, {}, { token: org.apiKey });
  const agentUrl = `${app.api}/agents/${created.data.createAgent.id}`;
  // Caller and agent cached: from here on the read runs no statement.
  expect((await http('GET', agentUrl, { token: org.apiKey })).status).toBe(200);

  const pglite = app.db.pglite!;
  const STATEMENTS = 300;
  let done = 0;
  // About 2 ms each, as a chunk write of an ingested document takes a few.
  const burst = Promise.all(Array.from({ length: STATEMENTS }, () => pglite.query('select pg_sleep(0.002)').then(() => done++)));
  const read = await http('GET', agentUrl, { token: org.apiKey });
  const doneAtRead = done;
  await burst;

  expect(read.status).toBe(200);
  expect(read.body.name).toBe('Cached');
  // Answered between statements, not after the whole queue (before: doneAtRead was 300).
  expect(doneAtRead).toBeLessThan(STATEMENTS / 2);
}, 60_000);
