/**
 * Words found in most chunks propose no text candidates (src/retrieval/common-words.ts, read by
 * chunk-stats.ts with each dimension's chunk count): the list comes from ANALYZE's statistics of the chunks table, and a search given it still finds a chunk by
 * its rarer words, still returns topK fragments when every word of the query is common (the vector
 * half proposes them), and scores each fragment exactly as without the list. The service's threshold
 * is 5,000 chunks; here the same code runs with 40 on a table of 300.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawQuery } from '../src/db/raw.ts';
import { newId } from '../src/ids.ts';
import { ChunkStats } from '../src/retrieval/chunk-stats.ts';
import { commonWordsSql } from '../src/retrieval/common-words.ts';
import { efSearchFor, HNSW_EF_SEARCH, SMALL_INDEX_EF_SEARCH } from '../src/db/vector-index.ts';
import { searchSql } from '../src/retrieval/retrieval.service.ts';
import { gql, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';

const DIM = 512;
const CHUNKS = 300;
let app: TestApp;
let datastoreId: string;
const em = () => app.db.orm.em.fork();

function unit(seed: number): number[] {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  const v = Array.from({ length: DIM }, next);
  const norm = Math.hypot(...v);
  return v.map((x) => Number((x / norm).toFixed(6)));
}

/** Every chunk is about an order; one in ten mentions a parcel; chunk 123 alone a zebra. */
const textOf = (i: number) => `Order ${i} was placed${i % 10 === 0 ? ' with a parcel' : ''}${i === 123 ? ' for a zebra' : ''}.`;

beforeAll(async () => {
  app = await startTestApp();
  const org = await newOrganization(app.url, 'Common words');
  datastoreId = (await gql(app.url, `mutation { createDatastore(input: { name: "Common" }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
  const datasourceId = newId();
  await rawQuery(
    em(),
    `insert into datasources (id, created_at, updated_at, organization_id, datastore_id, type, name, status, config, metadata)
     values ($1, now(), now(), $2, $3, 'text', 'orders', 'synched', '{}'::jsonb, '{}'::jsonb)`,
    [datasourceId, org.organizationId, datastoreId],
  );
  await rawQuery(
    em(),
    `insert into chunks (id, datasource_id, datastore_id, position, text, content_hash, embedding, dimension, metadata)
     select id, $1, $2, position, text, md5(text), embedding::vector, ${DIM}, '{}'::jsonb
     from unnest($3::uuid[], $4::int[], $5::text[], $6::text[]) as t(id, position, text, embedding)`,
    [
      datasourceId,
      datastoreId,
      Array.from({ length: CHUNKS }, () => newId()),
      Array.from({ length: CHUNKS }, (_, i) => i),
      Array.from({ length: CHUNKS }, (_, i) => textOf(i)),
      Array.from({ length: CHUNKS }, (_, i) => `[${unit(i + 1).join(',')}]`),
    ],
  );
  await rawQuery(em(), 'analyze chunks');
}, 120_000);

afterAll(async () => {
  await app?.close();
});

const search = (query: string, vector: number[], commonWords?: string[]) => {
  const { sql, params } = searchSql([datastoreId], query, vector, 5, {}, { commonWords });
  return rawQuery<{ text: string; score: string }>(em(), sql, params);
};

describe('common words', () => {
  it('are the lexemes in more chunks than the threshold, from the table statistics', async () => {
    const { sql, params } = commonWordsSql(40);
    const [row] = await rawQuery<{ words: string[] }>(em(), sql, params);
    // "order" and "place" are in all 300 chunks, "parcel" in 30: below 40.
    expect(row!.words).toEqual(['order', 'place']);
    expect((await new ChunkStats(40).get(em())).commonWords).toEqual(['order', 'place']);
    expect((await new ChunkStats().get(em())).commonWords).toEqual([]);
  });

  it('come with the chunks of each dimension, which set the ef_search of the vector scan', async () => {
    // The datasource's chunk_count is what a synch writes; this file inserts its chunks by hand.
    await rawQuery(em(), `update datasources set chunk_count = $2 where datastore_id = $1`, [datastoreId, CHUNKS]);
    const stats = await new ChunkStats().get(em());
    // Other test files share nothing with this database: its only chunks are these 300.
    expect(stats.indexed.get(DIM)).toBe(CHUNKS);
    expect(efSearchFor(stats.indexed.get(DIM))).toBe(SMALL_INDEX_EF_SEARCH);
    expect(efSearchFor(undefined)).toBe(HNSW_EF_SEARCH);
    expect(efSearchFor(1_000_000)).toBe(HNSW_EF_SEARCH);
  });

  it('a chunk is still found by the rarer words of the query, with the score it has without the list', async () => {
    // A vector far from chunk 123's: only the text half can propose it.
    const vector = unit(99_999);
    const without = await search('order placed for a zebra', vector);
    const withList = await search('order placed for a zebra', vector, ['order', 'place']);
    expect(withList[0]!.text).toBe(textOf(123));
    expect(without[0]!.text).toBe(textOf(123));
    expect(withList[0]!.score).toBe(without[0]!.score);
  });

  it('a query of common words only still returns topK fragments, from the vector half, scored as without the list', async () => {
    const vector = unit(42); // chunk 41's own vector
    const withList = await search('order placed', vector, ['order', 'place']);
    expect(withList).toHaveLength(5);
    expect(withList[0]!.text).toBe(textOf(41));
    const without = await search('order placed', vector);
    const scores = new Map(without.map((r) => [r.text, r.score]));
    for (const r of withList) if (scores.has(r.text)) expect(r.score).toBe(scores.get(r.text));
  });
});
