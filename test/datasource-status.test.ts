/**
 * A datasource's status has one writer, DatasourceService, and one table of allowed moves. The
 * table is checked pair by pair against the life the design describes; every allowed move is
 * made through the service on a real row; an illegal one throws and writes nothing; and through
 * the real app a user sees the documented sequences for a document that is stored, one that
 * fails, one over the organization's limit and one processed again.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeChunks } from '../src/ingestion/chunk.store.ts';
import { Datasource, DatasourceStatus as S, DatasourceType } from '../src/ingestion/datasource.entity.ts';
import { canMove, IllegalStatusMove, movesInto, STATUS_MOVES } from '../src/ingestion/datasource.status.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { createDatastore, settled, sql } from './support/ingest.ts';
import { waitFor } from './support/wait.ts';

const ALL = Object.values(S);
const OUTCOMES = [S.synched, S.error, S.usage_limit_reached];

/** The design's life of a datasource, written out independently of the table under test. */
function expectedMove(from: S, to: S): boolean {
  if (to === S.pending || to === S.running) return true; // asked for again; a worker takes (or retakes) a job
  // A stalled datasource (no job left to take it: stalled.ts) fails with its reason from where it waits.
  if (to === S.error) return from === S.running || from === S.unsynched || from === S.pending;
  if (OUTCOMES.includes(to)) return from === S.running; // only a datasource being processed gets an outcome
  return from === S.unsynched && to === S.unsynched; // an upload link's file arrived: queued, never synched
}

describe('the table of moves', () => {
  for (const from of ALL) {
    for (const to of ALL) {
      it(`${from} -> ${to} is ${expectedMove(from, to) ? 'allowed' : 'refused'}`, () => {
        expect(canMove(from, to)).toBe(expectedMove(from, to));
      });
    }
  }

  it('an outcome is reached only from running (error also from a stalled wait); nothing returns to unsynched', () => {
    for (const outcome of [S.synched, S.usage_limit_reached]) expect(movesInto(outcome)).toEqual([S.running]);
    expect(movesInto(S.error).sort()).toEqual([S.pending, S.running, S.unsynched].sort());
    expect(movesInto(S.unsynched)).toEqual([S.unsynched]);
    expect(movesInto(S.running).sort()).toEqual([...ALL].sort());
    expect(Object.keys(STATUS_MOVES).sort()).toEqual([...ALL].sort());
  });
});

let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let store: string;
let site: http.Server;
let siteUrl: string;

beforeAll(async () => {
  site = http.createServer((req, res) => {
    if (req.url === '/page') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><main><p>A page that exists and says something.</p></main></body></html>');
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  app = await startTestApp({ ALLOW_PRIVATE_URLS: 'true' });
  org = await newOrganization(app.url, 'Statuses');
  store = await createDatastore(app, org.apiKey);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await new Promise((r) => site?.close(r));
});

/** A datasource row in `status`, with no job queued, so no worker touches it. */
async function rowIn(status: S): Promise<{ em: ReturnType<TestApp['db']['orm']['em']['fork']>; ds: Datasource }> {
  const em = app.db.orm.em.fork();
  const ds = em.create(Datasource, {
    organization: org.organizationId,
    datastore: store,
    type: DatasourceType.text,
    name: `row ${status}`,
    content: 'text',
    status,
  } as never);
  await em.flush();
  const fresh = em.fork();
  return { em: fresh, ds: await fresh.findOneOrFail(Datasource, ds.id) };
}

const statusOf = async (id: string) => (await sql(app, 'select status, error_message from datasources where id = ?', [id]))[0];

describe('DatasourceService.transition on real rows', () => {
  for (const from of ALL) {
    for (const to of ALL) {
      if (!expectedMove(from, to)) continue;
      it(`moves ${from} -> ${to} and announces it`, async () => {
        const { em, ds } = await rowIn(from);
        await app.services.datasources.transition(em, ds, to, to === S.error ? { errorMessage: 'broken' } : {});
        expect(await statusOf(ds.id)).toEqual({ status: to, error_message: to === S.error ? 'broken' : null });
      });
    }
  }

  it('an illegal move throws IllegalStatusMove and writes nothing', async () => {
    for (const [from, to] of [
      [S.pending, S.synched],
      [S.synched, S.unsynched],
      [S.error, S.usage_limit_reached],
      [S.unsynched, S.synched],
    ] as const) {
      const { em, ds } = await rowIn(from);
      const move = app.services.datasources.transition(em, ds, to);
      await expect(move).rejects.toBeInstanceOf(IllegalStatusMove);
      await expect(move).rejects.toThrow(`cannot move from ${from} to ${to}`);
      expect((await statusOf(ds.id)).status).toBe(from);
    }
  });

  it("a run's outcome lands only while the run still owns the row: not after a new request, not after a newer run", async () => {
    const { em, ds } = await rowIn(S.pending);
    const { datasources } = app.services;
    const first = (await datasources.markRunning(em, ds))!;
    expect(await statusOf(ds.id)).toEqual({ status: S.running, error_message: null });

    // Asked for again while the first run works: the first run's outcome is dropped.
    const again = em.fork();
    await datasources.transition(again, await again.findOneOrFail(Datasource, ds.id), S.pending);
    expect(await datasources.markFailed(em, ds, first, 'too late')).toBe(false);
    expect(await datasources.markOverLimit(em, ds, first, 'too late')).toBe(false);
    expect(await statusOf(ds.id)).toEqual({ status: S.pending, error_message: null });

    // The new request's run starts; the first, slower run finishes after it started and stores nothing.
    await new Promise((r) => setTimeout(r, 5)); // two runs never share a millisecond in practice
    const second = (await datasources.markRunning(em, ds))!;
    const target = { datasourceId: ds.id, datastoreId: store, customId: null, dimension: 3 };
    const piece = (text: string) => ({ text, position: 0, page: null, embedding: [0.1, 0.2, 0.3], metadata: {} });
    const done = (run: typeof first, text: string) => ({ tokenCount: 1, hash: text, name: null, status: datasources.statusWrite(ds, run, S.synched, { chunkCount: 1 }) });
    expect(await storeChunks(em, target, [piece('stale text')], done(first, 'stale'))).toBe(false);
    expect(await sql(app, 'select text from chunks where datasource_id = ?', [ds.id])).toEqual([]);
    expect((await statusOf(ds.id)).status).toBe(S.running);

    expect(await storeChunks(em, target, [piece('fresh text')], done(second, 'fresh'))).toBe(true);
    expect(await sql(app, 'select text from chunks where datasource_id = ?', [ds.id])).toEqual([{ text: 'fresh text' }]);
    expect(await statusOf(ds.id)).toEqual({ status: S.synched, error_message: null });
    // An outcome of a finished run cannot land twice either.
    expect(await datasources.markFailed(em, ds, second, 'after the fact')).toBe(false);
  });
});

describe('what a user sees', () => {
  /** Creates a datasource and collects the statuses the subscription pushes for it until it settles. */
  async function watch(create: () => Promise<string>, until: (statuses: string[]) => boolean): Promise<{ id: string; statuses: string[] }> {
    const client = createClient({ url: `${app.url}/graphql/stream`, headers: { authorization: `Bearer ${org.apiKey}` } });
    const events: { id: string; status: string }[] = [];
    let target: string | null = null;
    const done = new Promise<void>((resolve, reject) => {
      (async () => {
        for await (const event of client.iterate({ query: `subscription($d: ID!) { datasourceStatusChanged(datastoreId: $d) { id status } }`, variables: { d: store } })) {
          events.push((event.data as any).datasourceStatusChanged);
          if (target && until(events.filter((e) => e.id === target).map((e) => e.status))) return resolve();
        }
      })().catch(reject);
    });
    // The subscription listens once it delivered something: warm it up with a document of its own.
    const warmUp = await createText('Warm-up', 'A warm-up document.');
    await waitFor(async () => events.some((e) => e.id === warmUp), 20_000, 'the subscription to deliver');
    target = await create();
    await Promise.race([done, new Promise((_, rej) => setTimeout(() => rej(new Error(`events so far: ${JSON.stringify(events)}`)), 30_000))]);
    client.dispose();
    return { id: target, statuses: events.filter((e) => e.id === target).map((e) => e.status) };
  }

  async function createText(name: string, text: string): Promise<string> {
    const res = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'text', name, text } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.id;
  }

  const isOutcome = (s: string[]) => OUTCOMES.includes(s.at(-1) as S);

  it('a document stored: unsynched, running, synched; processed again: pending, running, synched', async () => {
    const { id, statuses } = await watch(() => createText('Stored', 'A document that fits and is stored.'), isOutcome);
    expect(statuses).toEqual(['unsynched', 'running', 'synched']);
    const again = await watch(
      async () => {
        const res = await gql(app.url, `mutation($id: ID!) { resyncDatasource(id: $id) { status } }`, { id }, { token: org.apiKey });
        expect(res.data?.resyncDatasource.status).toBe('pending');
        return id;
      },
      (s) => s.length > 1 && isOutcome(s),
    );
    expect(again.statuses).toEqual(['pending', 'running', 'synched']);
  });

  it('a page that cannot be read: unsynched, running, error with the reason', async () => {
    const { id, statuses } = await watch(async () => {
      const res = await call('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'web_page', config: { source_url: `${siteUrl}/missing` } } });
      expect(res.status).toBe(200);
      return res.body.id;
    }, isOutcome);
    expect(statuses).toEqual(['unsynched', 'running', 'error']);
    expect((await settled(app, org.apiKey, id)).errorMessage).toMatch(/404/);
  });

  it("a document over the organization's stored-token limit: unsynched, running, usage_limit_reached", async () => {
    const [{ used }] = await sql(app, 'select coalesce(sum(token_count), 0)::int as used from datasources where organization_id = ?', [org.organizationId]);
    await sql(app, 'update organizations set stored_token_limit = ? where id = ?', [used + 20, org.organizationId]);
    try {
      const { id, statuses } = await watch(() => createText('Too big', 'x'.repeat(400)), isOutcome);
      expect(statuses).toEqual(['unsynched', 'running', 'usage_limit_reached']);
      expect(await settled(app, org.apiKey, id)).toMatchObject({ status: 'usage_limit_reached', chunkCount: 0, errorMessage: expect.stringMatching(/would pass the organization's limit/) });
    } finally {
      await sql(app, 'update organizations set stored_token_limit = 1000000000 where id = ?', [org.organizationId]);
    }
  });
});
