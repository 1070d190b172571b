/**
 * Where a chunk row's insert time goes: bench:ingest's chunk statement (the same columns and
 * INSERT ... SELECT FROM unnest, 100 rows a statement, one transaction each, as a 100-paragraph
 * document is stored) into a table built like `chunks`, once with everything in place and once
 * with one part taken away or changed at a time. CPU time per row of the database alone: in PGlite
 * the process's own (the engine runs on this thread), on PostgreSQL the backend's, read from /proc.
 *
 *   node --import @swc-node/register/esm-register bench/ingest-rows.ts
 *
 * Env: DATABASE_URL (PostgreSQL, the server on this machine; a database of its own is created and
 * dropped), else PGlite in memory (BENCH_PGLITE=disk: on disk); BENCH_PREFILL (5000 rows in the
 * table first, not timed), BENCH_ROWS (2000 timed rows), BENCH_VARIANTS (comma-separated names,
 * default all), BENCH_REPEAT (2: each variant's figure is the lower of that many runs).
 * Vectors come from the OpenAI-compatible test server (384 dimensions), texts as bench:ingest's.
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import { pgliteStartParams } from '../src/db/pglite-settings.ts';
import { vectorFromInts, vectorIntsLiteral, vectorIntsScale } from '../src/db/vector-ints.ts';
import { newId } from '../src/ids.ts';
import { startOpenAiTestServer } from '../test/support/openai-server.ts';

const DIM = 384;
const PREFILL = Number(process.env.BENCH_PREFILL ?? 5000);
const ROWS = Number(process.env.BENCH_ROWS ?? 2000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 2);
const BATCH = 100;
const postgresUrl = process.env.DATABASE_URL && !process.env.DATABASE_URL.startsWith('pglite:') ? process.env.DATABASE_URL : null;

interface Variant {
  name: string;
  /** Changes to the table after it is created (the full table is `chunks` as the migrations leave it). */
  ddl: string[];
  /** The embedding as sent: ints (the service's way) or text (pgvector's literal). */
  text?: boolean;
  hnsw?: string | null;
}
const HNSW = `create index on t using hnsw ((embedding::vector(${DIM})) vector_cosine_ops) where dimension = ${DIM}`;
const variants: Variant[] = [
  { name: 'full (as the service)', ddl: [] },
  { name: 'vector as text', ddl: [], text: true },
  { name: 'no HNSW', ddl: [], hnsw: null },
  { name: 'no HNSW, no GIN', ddl: ['drop index t_tsv_idx'], hnsw: null },
  { name: 'no HNSW, no GIN, no tsv', ddl: ['drop index t_tsv_idx', 'alter table t drop column tsv'], hnsw: null },
  { name: 'bare heap (no indexes but the key, no FK, no tsv)', ddl: ['drop index t_tsv_idx', 'alter table t drop column tsv', 'drop index t_ds_idx', 'drop index t_dsp_idx', 'alter table t drop constraint t_fk'], hnsw: null },
  { name: 'no FK', ddl: ['alter table t drop constraint t_fk'] },
  { name: 'GIN fastupdate off', ddl: ['alter index t_tsv_idx set (fastupdate = off)'] },
  { name: 'GIN pending list 4 MB', ddl: ['alter index t_tsv_idx set (gin_pending_list_limit = 4096)'] },
  { name: 'toast_tuple_target 8160 (vector inline)', ddl: ['alter table t set (toast_tuple_target = 8160)'] },
  { name: 'embedding storage main', ddl: ['alter table t alter column embedding set storage main'] },
  { name: 'HNSW ef_construction 40', ddl: [], hnsw: `${HNSW.replace('vector_cosine_ops)', 'vector_cosine_ops) with (ef_construction = 40)')}` },
  { name: 'HNSW m 12, ef_construction 40', ddl: [], hnsw: `${HNSW.replace('vector_cosine_ops)', 'vector_cosine_ops) with (m = 12, ef_construction = 40)')}` },
  { name: 'HNSW m 12', ddl: [], hnsw: `${HNSW.replace('vector_cosine_ops)', 'vector_cosine_ops) with (m = 12)')}` },
  { name: 'HNSW m 8', ddl: [], hnsw: `${HNSW.replace('vector_cosine_ops)', 'vector_cosine_ops) with (m = 8)')}` },
  { name: 'HNSW m 8, ef_construction 32', ddl: [], hnsw: `${HNSW.replace('vector_cosine_ops)', 'vector_cosine_ops) with (m = 8, ef_construction = 32)')}` },
  { name: 'HNSW on halfvec', ddl: [], hnsw: `create index on t using hnsw ((embedding::halfvec(${DIM})) halfvec_cosine_ops) where dimension = ${DIM}` },
];
const only = process.env.BENCH_VARIANTS?.split(',').map((s) => s.trim());
const chosen = only ? variants.filter((v) => only.some((o) => v.name.startsWith(o))) : variants;

// ---- texts and vectors, as bench:ingest makes them ----
const words = 'policy refund customer order parcel warehouse invoice account password support answer question delivery product price discount warranty repair battery screen keyboard office holiday meeting contract payment'.split(' ');
let state = 4242;
const rand = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const sentence = () => Array.from({ length: 12 }, () => words[Math.floor(rand() * words.length)]).join(' ') + '.';
function paragraph(head: string) {
  const target = 700 + Math.floor(rand() * 201);
  let p = head;
  while (p.length < target) p += ` ${sentence()}`;
  return p.slice(0, p.lastIndexOf(' ', target)) + '.';
}
const total = PREFILL + ROWS;
const texts = Array.from({ length: total }, (_, i) => paragraph(`Section 1.${Math.floor(i / 100)}.${i % 100}.`));
const server = await startOpenAiTestServer({ embeddingDimension: DIM });
const vectors: number[][] = [];
for (let s = 0; s < total; s += 1000) {
  const res = await fetch(`${server.url}/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({ model: 'text-embedding-3-small', input: texts.slice(s, s + 1000), dimensions: DIM }),
  });
  for (const d of ((await res.json()) as any).data) vectors.push(d.embedding);
}
await server.close();

// ---- the database ----
interface Db {
  query(text: string, params?: unknown[]): Promise<unknown>;
  /** CPU seconds of the database so far. */
  cpu(): Promise<number>;
  close(): Promise<void>;
}
async function openDb(): Promise<Db> {
  if (postgresUrl) {
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    const name = `bench_rows_${process.pid}_${Date.now()}`;
    await admin.query(`create database ${name}`);
    const url = new URL(postgresUrl);
    url.pathname = `/${name}`;
    const c = new pg.Client({ connectionString: url.toString() });
    await c.connect();
    await c.query('create extension if not exists vector');
    const pid = ((await c.query('select pg_backend_pid() as pid')).rows[0] as { pid: number }).pid;
    return {
      query: (text, params) => c.query(text, params as unknown[]),
      cpu: async () => {
        const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return (Number(f[11]) + Number(f[12])) / 100;
      },
      close: async () => {
        await c.end();
        await admin.query(`drop database ${name}`);
        await admin.end();
      },
    };
  }
  const dir = process.env.BENCH_PGLITE === 'disk' ? mkdtempSync(path.join(tmpdir(), 'bench-rows-')) : null;
  const db = await PGlite.create({ dataDir: dir ?? undefined, extensions: { vector }, startParams: pgliteStartParams() });
  await db.exec('create extension if not exists vector');
  return {
    query: (text, params) => db.query(text, params),
    cpu: async () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1e6;
    },
    close: async () => {
      await db.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

const SCHEMA = [
  `create table ds (id uuid primary key)`,
  `create table t ("id" uuid not null, "datasource_id" uuid not null, "datastore_id" uuid not null, "custom_id" text null, "position" int not null, "page" int null, "text" text not null, "content_hash" text not null, "embedding" vector null, "dimension" smallint not null, "metadata" jsonb not null, "tsv" tsvector generated always as (to_tsvector('english', "text")) stored, primary key ("id"))`,
  `create index t_ds_idx on t ("datastore_id", "custom_id")`,
  `create index t_dsp_idx on t ("datasource_id", "position")`,
  `create index t_tsv_idx on t using gin ("tsv") with (gin_pending_list_limit = 256)`,
  `alter table t add constraint t_fk foreign key ("datasource_id") references ds ("id") on delete cascade`,
];
const insertSql = (text: boolean) => `insert into t (id, datasource_id, datastore_id, custom_id, position, page, text, content_hash, embedding, dimension, metadata)
  select id, $1::uuid, $2::uuid, $3::text, position, page, text, content_hash, ${text ? 'embedding::vector' : vectorFromInts('embedding::int4[]', '$12')}, $4::smallint, metadata
  from unnest($5::uuid[], $6::int[], $7::int[], $8::text[], $9::text[], $10::text[], $11::jsonb[]) as t(id, position, page, text, content_hash, embedding, metadata)`;

async function insertDoc(db: Db, v: Variant, from: number, count: number, datastoreId: string) {
  const dsId = newId();
  await db.query('insert into ds values ($1)', [dsId]);
  const idx = Array.from({ length: count }, (_, i) => from + i);
  await db.query('begin');
  await db.query(insertSql(!!v.text), [
    dsId,
    datastoreId,
    null,
    DIM,
    idx.map(() => newId()),
    idx.map((i) => i % 100),
    idx.map(() => null),
    idx.map((i) => texts[i]),
    idx.map((i) => createHash('sha256').update(texts[i]!).digest('hex')),
    idx.map((i) => (v.text ? `[${vectors[i]!.join(',')}]` : vectorIntsLiteral(vectors[i]!))),
    idx.map((i) => JSON.stringify({ datasource_name: `doc ${i}`, source: `doc ${i}.txt`, custom_id: null })),
    ...(v.text ? [] : [vectorIntsScale(DIM)]),
  ]);
  await db.query('commit');
}

async function measure(v: Variant): Promise<number> {
  const db = await openDb();
  for (const s of SCHEMA) await db.query(s);
  if (v.hnsw !== null) await db.query(v.hnsw ?? HNSW);
  for (const s of v.ddl) await db.query(s);
  const datastoreId = newId();
  for (let s = 0; s < PREFILL; s += BATCH) await insertDoc(db, v, s, Math.min(BATCH, PREFILL - s), datastoreId);
  await db.query('checkpoint');
  const c0 = await db.cpu();
  for (let s = PREFILL; s < total; s += BATCH) await insertDoc(db, v, s, Math.min(BATCH, total - s), datastoreId);
  const cpu = (await db.cpu()) - c0;
  await db.close();
  return (cpu * 1000) / ROWS;
}

console.log(`${postgresUrl ? 'PostgreSQL (backend CPU)' : `PGlite ${process.env.BENCH_PGLITE === 'disk' ? 'on disk' : 'in memory'} (process CPU)`}; ${cpus().length} cores (${cpus()[0]?.model}); load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`${PREFILL} rows first, then ${ROWS} timed in statements of ${BATCH} rows (a transaction each); ${DIM} dimensions; lower of ${REPEAT} runs`);
const results: { name: string; ms: number }[] = [];
for (const v of chosen) {
  let best = Infinity;
  for (let r = 0; r < REPEAT; r++) best = Math.min(best, await measure(v));
  results.push({ name: v.name, ms: best });
  console.log(`${v.name.padEnd(52)} ${best.toFixed(3).padStart(7)} ms per row   ${(1000 / best).toFixed(0).padStart(6)} rows per CPU-second`);
}
console.log(`load at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
process.exit(0);
