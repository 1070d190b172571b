/**
 * The datastore query's SQL on the real database: the vector search must be able to use the
 * HNSW index (the query vector is a parameter in its ORDER BY, not a column of a CTE, which
 * PostgreSQL materializes and then scans every chunk), and a filtered search through that index
 * keeps scanning (pgvector's iterative scan, a setting of every connection) until enough rows
 * pass the filter. The corpus is small, so the planner is steered towards the index the way a
 * large corpus steers it (sequential scans off; for the filtered case the btree indexes of the
 * filter columns are dropped inside a transaction that is rolled back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawQuery } from '../src/db/raw.ts';
import { HNSW_EF_SEARCH, VECTOR_SEARCH_SETTINGS } from '../src/db/vector-index.ts';
import { newId } from '../src/ids.ts';
import { searchSql, TEXT_QUERY_WORDS } from '../src/retrieval/retrieval.service.ts';
import { vectorLiteral } from '../src/db/vector.type.ts';
import { gql, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';

const DIM = 512;
const DATASOURCES = 100;
const PER_DATASOURCE = 10;

let app: TestApp;
let datastoreId: string;
const datasources: { id: string; customId: string }[] = [];

/** Deterministic pseudo-random unit vectors. */
function vectors(n: number, seed: number): number[][] {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  return Array.from({ length: n }, () => {
    const v = Array.from({ length: DIM }, next);
    const norm = Math.hypot(...v);
    return v.map((x) => Number((x / norm).toFixed(6)));
  });
}

const em = () => app.db.orm.em.fork();

beforeAll(async () => {
  app = await startTestApp();
  expect(app.services.embedder.dimension).toBe(DIM);
  const org = await newOrganization(app.url, 'Plans');
  datastoreId = (await gql(app.url, `mutation { createDatastore(input: { name: "Plans" }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
  for (let i = 0; i < DATASOURCES; i++) datasources.push({ id: newId(), customId: `doc-${i}` });
  await rawQuery(
    em(),
    `insert into datasources (id, created_at, updated_at, organization_id, datastore_id, type, name, status, config, custom_id, metadata)
     select id, now(), now(), $1, $2, 'text', custom_id, 'synched', '{}'::jsonb, custom_id, '{}'::jsonb from unnest($3::uuid[], $4::text[]) as t(id, custom_id)`,
    [org.organizationId, datastoreId, datasources.map((d) => d.id), datasources.map((d) => d.customId)],
  );
  const rows = datasources.flatMap((d) => Array.from({ length: PER_DATASOURCE }, (_, position) => ({ d, position })));
  const vs = vectors(rows.length, 7);
  await rawQuery(
    em(),
    `insert into chunks (id, datasource_id, datastore_id, custom_id, position, page, text, content_hash, embedding, dimension, metadata)
     select id, datasource_id, $1::uuid, custom_id, position, null, text, md5(text), embedding::vector, ${DIM}, '{}'::jsonb
     from unnest($2::uuid[], $3::uuid[], $4::text[], $5::int[], $6::text[], $7::text[]) as t(id, datasource_id, custom_id, position, text, embedding)`,
    [
      datastoreId,
      rows.map(() => newId()),
      rows.map((r) => r.d.id),
      rows.map((r) => r.d.customId),
      rows.map((r) => r.position),
      rows.map((r) => `Passage ${r.position} of ${r.d.customId}.`),
      vs.map((v) => `[${v.join(',')}]`),
    ],
  );
  await rawQuery(em(), 'analyze chunks');
}, 120_000);

afterAll(async () => {
  await app?.close();
});

/** What a large corpus makes the planner prefer, on 1,000 chunks: no sequential scan, no btree path. */
const STEER = ['set local enable_seqscan = off', 'set local enable_bitmapscan = off', 'drop index chunks_datastore_id_index', 'drop index chunks_datasource_id_position_index'];

/**
 * EXPLAIN ANALYZE and run the service's statement in one transaction after `prepare`, then roll
 * back. The plan leaves out the nodes that never ran (of the exact and index branches, the other).
 */
async function planAndRun(filters: Parameters<typeof searchSql>[4], topK: number, prepare: string[], opts: Parameters<typeof searchSql>[5] = {}) {
  const [query] = vectors(1, 99); // no chunk's text has 'zebra': every row comes from the vector search
  const { sql, params } = searchSql([datastoreId], 'zebra', query!, topK, filters, opts);
  let plan = '';
  let rows: { datasource_id: string; custom_id: string; text: string }[] = [];
  await em()
    .transactional(async (tx) => {
      for (const statement of prepare) await rawQuery(tx, statement);
      const lines = (await rawQuery<{ 'QUERY PLAN': string }>(tx, `explain (analyze, costs off, timing off) ${sql}`, params)).map((r) => r['QUERY PLAN']);
      plan = lines.filter((l) => !l.includes('never executed')).join('\n');
      rows = await rawQuery(tx, sql, params);
      throw new Error('roll back');
    })
    .catch((err: Error) => {
      if (err.message !== 'roll back') throw err;
    });
  return { plan, rows };
}

describe('datastore query SQL', () => {
  it('every connection has the vector search settings', async () => {
    for (const [name, value] of Object.entries(VECTOR_SEARCH_SETTINGS)) {
      const [row] = await rawQuery<{ v: string }>(em(), `select current_setting($1) as v`, [name]);
      expect(row!.v, name).toBe(value);
    }
  });

  it('a prepared search runs with the vector search settings on every connection, and finds what the plain one finds', async () => {
    // More at once than the pool has connections open: some are opened for the prepared statements themselves.
    const settings = await Promise.all(
      Array.from({ length: 25 }, () => rawQuery<{ v: string }>(em(), `select current_setting('hnsw.iterative_scan') as v`, [], { prepared: true })),
    );
    for (const [row] of settings) expect(row!.v).toBe(VECTOR_SEARCH_SETTINGS['hnsw.iterative_scan']);
    const [query] = vectors(1, 13);
    for (const filters of [{}, { custom_ids: ['doc-3', 'doc-4'] }]) {
      const { sql, params } = searchSql([datastoreId], 'passage of doc', query!, 10, filters, { exactUpTo: 40 });
      const plain = await rawQuery(em(), sql, params);
      expect(plain.length).toBeGreaterThan(0);
      // Twice: the second run on a connection executes the statement it prepared.
      for (let i = 0; i < 2; i++) expect(await rawQuery(em(), sql, params, { prepared: true })).toEqual(plain);
    }
    if (process.env.TEST_DATABASE_URL) {
      // On PostgreSQL the statement is prepared on the connection that ran it.
      const [row] = await rawQuery<{ n: number }>(em(), `select count(*)::int as n from pg_prepared_statements where name like 'q\\_%' and not from_sql`, [], { prepared: true });
      expect(row!.n).toBeGreaterThan(0);
    }
  });

  it('the query vector is sent as the same 4-byte floats pgvector would keep from full precision', async () => {
    const [v] = vectors(1, 5);
    const tiny = [...v!.slice(0, DIM - 3), 1.2345678e-9, -3.3e-12, 0];
    for (const vector of [v!, tiny]) {
      const literal = vectorLiteral(vector);
      expect(JSON.parse(literal).map(Math.fround)).toEqual(vector.map(Math.fround));
      const [row] = await rawQuery<{ same: boolean }>(em(), `select $1::vector = $2::vector as same`, [literal, `[${vector.join(',')}]`]);
      expect(row!.same).toBe(true);
    }
  });

  it('the unfiltered vector search uses the HNSW index', async () => {
    const { plan, rows } = await planAndRun({}, 10, STEER);
    expect(plan).toMatch(/Index Scan using chunks_embedding_512_hnsw/);
    expect(rows).toHaveLength(10);
  });

  it('the HNSW scan runs with HNSW_EF_SEARCH while the connection keeps the lower value the planner costs with', async () => {
    const [query] = vectors(1, 11);
    const { sql, params } = searchSql([datastoreId], 'zebra', query!, 10);
    let during = '';
    await em().transactional(async (tx) => {
      expect(await rawQuery(tx, sql, params)).toHaveLength(10);
      during = (await rawQuery<{ v: string }>(tx, `select current_setting('hnsw.ef_search') as v`))[0]!.v;
    });
    expect(during).toBe(String(HNSW_EF_SEARCH));
    // Set for the statement's transaction only: the next statement is planned with the connection's value again.
    const [after] = await rawQuery<{ v: string }>(em(), `select current_setting('hnsw.ef_search') as v`);
    expect(after!.v).toBe(VECTOR_SEARCH_SETTINGS['hnsw.ef_search']);
    expect(Number(after!.v)).toBeLessThan(HNSW_EF_SEARCH);
  });

  it('the text search finds the chunk with all the query words among a thousand that share one of them', async () => {
    // Every chunk says "Passage"; only one is passage 7 of doc-42. The text search ranks a bounded
    // pool, filled with the chunks that have the most query words first.
    const { sql, params } = searchSql([datastoreId], 'passage 7 of doc-42', vectors(1, 3)[0]!, 3, {}, { mode: 'text' });
    const rows = await rawQuery<{ text: string }>(em(), sql, params);
    expect(rows[0]!.text).toBe('Passage 7 of doc-42.');
  });

  it('a query of 10,000 characters costs the text half no more than its first words would', async () => {
    // Each word of the text half is a GIN lookup and a term of the ranking: 1,400 distinct words
    // (a pasted page) took seconds to minutes before only the first ones were read.
    const long = Array.from({ length: 1400 }, (_, i) => (i % 7 === 0 ? 'passage' : `w${i.toString(36)}x`)).join(' ').slice(0, 10_000);
    const timed = async (query: string) => {
      const { sql, params } = searchSql([datastoreId], query, vectors(1, 3)[0]!, 5, {}, {});
      const started = performance.now();
      const rows = await rawQuery<{ text: string }>(em(), sql, params);
      return { ms: performance.now() - started, rows };
    };
    const short = await timed(long.split(' ').slice(0, TEXT_QUERY_WORDS).join(' '));
    const full = await timed(long);
    console.info(`10,000-character query: ${full.ms.toFixed(0)} ms; its first ${TEXT_QUERY_WORDS} words: ${short.ms.toFixed(0)} ms`);
    expect(full.rows).toHaveLength(5);
    expect(full.ms).toBeLessThan(Math.max(5 * short.ms, 2000));
  });

  it('a filtered search through the HNSW index still returns topK rows when that many match (iterative scan)', async () => {
    // 1 datasource of 100: about 4 of the 400 nearest chunks the index visits first pass the
    // filter; only an iterative scan finds all 10.
    const one = datasources[42]!;
    for (const filters of [{ custom_ids: [one.customId] }, { datasource_ids: [one.id] }]) {
      const { plan, rows } = await planAndRun(filters, 10, STEER);
      expect(plan, JSON.stringify(filters)).toMatch(/Index Scan using chunks_embedding_512_hnsw/);
      expect(rows, JSON.stringify(filters)).toHaveLength(10);
      expect(new Set(rows.map((r) => r.datasource_id))).toEqual(new Set([one.id]));
    }
  });

  it('a search whose filter keeps few chunks compares them all, where the planner would take the index', async () => {
    // The datasources count their chunks as a synch leaves them (this file inserted them by hand).
    await rawQuery(em(), 'update datasources set chunk_count = $2 where datastore_id = $1', [datastoreId, PER_DATASOURCE]);
    const three = { datasource_ids: datasources.slice(10, 13).map((d) => d.id) }; // 30 chunks
    // The truth: every chunk of the three compared (no index).
    const truth = await planAndRun(three, 10, ['set local enable_indexscan = off']);
    expect(truth.plan).not.toMatch(/hnsw/);
    // Bound above the 30 kept: the exact branch runs, though the planner is steered to the index.
    const exact = await planAndRun(three, 10, STEER, { exactUpTo: 100 });
    expect(exact.plan).not.toMatch(/hnsw/);
    expect(exact.rows.map((r) => r.text)).toEqual(truth.rows.map((r) => r.text));
    // Bound below them, or a search keeping the whole datastore (1,000): through the index.
    expect((await planAndRun(three, 10, STEER, { exactUpTo: 20 })).plan).toMatch(/Index Scan using chunks_embedding_512_hnsw/);
    const all = await planAndRun({}, 10, STEER, { exactUpTo: 100 });
    expect(all.plan).toMatch(/Index Scan using chunks_embedding_512_hnsw/);
    expect(all.rows).toHaveLength(10);
  });
});
