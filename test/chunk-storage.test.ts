/**
 * How chunk rows are stored so that inserting them stays cheap with the indexes in place
 * (migration 20261129000400, issue 19): a chunk's vector stays in its row instead of going to the
 * TOAST table (a second heap and index insert per chunk), and each dimension's HNSW index is
 * built with the service's parameters, including an index that existed before the upgrade,
 * which must still find the nearest chunk afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawQuery } from '../src/db/raw.ts';
import { rebuildHnswSql } from '../migrations/Migration20261129000400ChunkInsertCost.ts';
import { HNSW_BUILD } from '../src/db/vector-index.ts';
import { newId } from '../src/ids.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { waitFor } from './support/wait.ts';

let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let datastoreId: string;
let datasourceId: string;

const sql = <T = any>(query: string, params: unknown[] = []) => app.db.orm.em.getConnection().execute(query, params) as Promise<T[]>;
const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i} about the warranty of battery model ${i}: ${'the repair desk answers within two days. '.repeat(18)}`);

beforeAll(async () => {
  app = await startTestApp();
  org = await newOrganization(app.url, 'Storage');
  datastoreId = (await gql(app.url, `mutation { createDatastore(input: { name: "Storage" }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
  const created = await http('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId, type: 'text', name: 'Manual', text: paragraphs.join('\n\n') } });
  expect(created.status).toBe(200);
  datasourceId = created.body.id;
  await waitFor(async () => {
    const [row] = await sql<{ status: string }>('select status from datasources where id = ?', [datasourceId]);
    return row?.status === 'synched' || undefined;
  }, 30_000, 'the document to be synched');
}, 120_000);

afterAll(async () => {
  await app?.close();
});

describe('chunk rows', () => {
  it('keep their vectors in the row: nothing goes to the TOAST table', async () => {
    const [{ n, dims }] = await sql<{ n: number; dims: number }>('select count(*)::int as n, max(vector_dims(embedding))::int as dims from chunks where datasource_id = ?', [datasourceId]);
    expect(n).toBeGreaterThan(5);
    expect(dims).toBe(app.services.embedder.dimension);
    // A row is ~3 kB with a 512-dimension vector: past the 2 kB where PostgreSQL moves values out by default.
    const [{ row }] = await sql<{ row: number }>('select max(pg_column_size(c.*))::int as row from chunks c where datasource_id = ?', [datasourceId]);
    expect(row).toBeGreaterThan(2100);
    const [{ toast }] = await sql<{ toast: string }>(`select pg_relation_size(reltoastrelid)::text as toast from pg_class where relname = 'chunks'`);
    expect(Number(toast)).toBe(0);

    const found = await http('POST', `${app.api}/datastores/${datastoreId}/query`, { token: org.apiKey, body: { query: paragraphs[7], topK: 3 } });
    expect(found.status).toBe(200);
    const results = (Array.isArray(found.body) ? found.body : found.body.results) as { text: string }[];
    expect(results[0]!.text).toContain('battery model 7');
  });

  it("the service's HNSW index of each dimension is built with its parameters", async () => {
    const [{ options }] = await sql<{ options: string[] }>(`select reloptions as options from pg_class where relname = ?`, [`chunks_embedding_${app.services.embedder.dimension}_hnsw`]);
    expect(HNSW_BUILD).toBe('with (m = 12, ef_construction = 40)');
    expect(options).toEqual(['m=12', 'ef_construction=40']);
  });

  it('an index that existed before the upgrade is rebuilt with them and still finds the nearest chunk', async () => {
    const dim = 64;
    await sql(`create index chunks_embedding_${dim}_hnsw on chunks using hnsw ((embedding::vector(${dim})) vector_cosine_ops) where dimension = ${dim}`);
    const vectors = Array.from({ length: 200 }, (_, i) => {
      const v = Array.from({ length: dim }, (_, j) => Math.sin((i + 1) * (j + 1)));
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    });
    await rawQuery(
      app.db.orm.em.fork(),
      `insert into chunks (id, datasource_id, datastore_id, position, text, content_hash, embedding, dimension, metadata)
       select id, $1::uuid, $2::uuid, position, 'v' || position, md5(position::text), embedding::vector, ${dim}, '{}'::jsonb
       from unnest($3::uuid[], $4::int[], $5::text[]) as t(id, position, embedding)`,
      [datasourceId, datastoreId, vectors.map(() => newId()), vectors.map((_, i) => 1000 + i), vectors.map((v) => `[${v.join(',')}]`)],
    );

    await app.db.orm.em.getConnection().execute(rebuildHnswSql('with (m = 12, ef_construction = 40)'));

    const [{ options }] = await sql<{ options: string[] }>(`select reloptions as options from pg_class where relname = ?`, [`chunks_embedding_${dim}_hnsw`]);
    expect(options).toEqual(['m=12', 'ef_construction=40']);
    const target = `[${vectors[123]!.join(',')}]`;
    const nearest = await app.db.orm.em.fork().transactional(async (tx) => {
      await rawQuery(tx, 'set local enable_seqscan = off');
      const query = `select text from chunks where dimension = ${dim} order by embedding::vector(${dim}) <=> '${target}' limit 1`;
      const plan = (await rawQuery(tx, `explain ${query}`)) as { 'QUERY PLAN': string }[];
      expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain(`chunks_embedding_${dim}_hnsw`);
      return (await rawQuery(tx, query)) as { text: string }[];
    });
    expect(nearest[0]!.text).toBe('v1123');
    await sql(`delete from chunks where dimension = ${dim}`);
    await sql(`drop index chunks_embedding_${dim}_hnsw`);
  });
});
