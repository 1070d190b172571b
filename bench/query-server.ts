/**
 * The service for bench:query (embedded PGlite in memory unless DATABASE_URL is set), plus a
 * side channel on another port that belongs to the benchmark, not to the app:
 *
 *   POST /seed   {datastoreId, chunks, datasources, clusters, seed, corpus}  bulk rows by SQL (corpus
 *                files: issue 19's paragraphs, each embedded by the app's embedder)
 *   POST /existing {chunks, datasources, clusters, queries, seed, caller}  a datastore seeded with that
 *                corpus by an earlier run (kept database), in /seed's answer shape; {} if none. With
 *                caller member, the datastore moves to a new organization, whose API key it returns
 *   POST /embed  {texts}            the app's own embedder, timed here, one text at a time
 *   POST /sql    {settings, sql, params}  (PGlite only) the statement (in a transaction after
 *                the SET LOCALs of `settings` when there are any) run directly on the
 *                PGlite instance, timed here: PGlite has no second client, so this is the
 *                "bare client" of the embedded database
 *   POST /stats  time the app spent in embedQuery and searchByVector since the last call
 *   POST /search {datastoreIds, query, vector, topK, filters}  the app's searchByVector alone, timed here
 *   POST /cache  {entries}          replaces the app's cache of query vectors by an empty one of that
 *                size (0: none, so every request embeds its text)
 *
 * Prints `SIDE <url>` then `LISTENING <app url>`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { start } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/ids.ts';
import { QueryVectors } from '../src/retrieval/query-vectors.ts';
import { ChunkGenerator, corpus, filesCorpus, rng } from './corpus.ts';
import { vectorLiteral } from '../src/db/vector.type.ts';
import { corpusName } from './lib.ts';

const running = await start(
  loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    // Anonymous queries of the public datastore spend the address's budget: the benchmark is one address.
    RATE_LIMIT_IP_PER_MINUTE: '1000000',
    RATE_LIMIT_VISITOR_PER_MINUTE: '100000',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'agentbase-bench-')),
    DATABASE_URL: process.env.DATABASE_URL || 'pglite://memory',
  }),
);
const { pglite } = running.db;
const embedder = running.services.embedder;

/** A session of its own for seeding (maintenance_work_mem must hold for the index build). */
type Exec = (sql: string, params?: unknown[]) => Promise<{ rows: any[] }>;
async function seedSession(): Promise<{ exec: Exec; close(): Promise<void> }> {
  if (pglite) return { exec: (sql, params) => pglite.query(sql, params), close: async () => {} };
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  return { exec: (sql, params) => client.query(sql, params as unknown[]), close: () => client.end() };
}

interface SeedInput {
  datastoreId: string;
  chunks: number;
  datasources: number;
  clusters: number;
  queries: number;
  seed: number;
  /** clusters (default): synthetic clustered vectors; files: issue 19's corpus, each paragraph embedded by the app's embedder. */
  corpus?: 'clusters' | 'files';
}

async function seed(input: SeedInput) {
  const t0 = performance.now();
  const { exec, close } = await seedSession();
  try {
    const [ds] = (await exec('select organization_id from datastores where id = $1', [input.datastoreId])).rows;
    if (!ds) throw new Error(`no datastore ${input.datastoreId}`);
    const organizationId = ds.organization_id as string;

    const files = input.corpus === 'files' ? filesCorpus(input.seed, input.datasources, input.chunks / input.datasources, input.queries) : null;
    const datasources = Array.from({ length: input.datasources }, (_, i) => ({ id: newId(), customId: `ext-${String(i).padStart(4, '0')}`, name: files ? `file ${i}.txt` : `Document ${i}` }));
    await exec(
      `insert into datasources (id, created_at, updated_at, organization_id, datastore_id, type, name, status, config, custom_id, metadata)
       select id, now(), now(), $1, $2, 'text', name, 'synched', '{}'::jsonb, custom_id, '{}'::jsonb
       from unnest($3::uuid[], $4::text[], $5::text[]) as t(id, name, custom_id)`,
      [organizationId, input.datastoreId, datasources.map((d) => d.id), datasources.map((d) => d.name), datasources.map((d) => d.customId)],
    );

    // Cluster centres: real embeddings of the topic sentences.
    const { topics, queries } = files ? { topics: [], queries: files.queries } : corpus(input.seed, input.clusters, input.queries);
    const centres = files ? [] : await embedder.embedDocuments(topics.map((t) => t.join(' ')));
    const tCentres = performance.now();

    // Bulk load without the HNSW index, then build it once: much faster than inserting into it.
    const indexes = (await exec(`select indexname, indexdef from pg_indexes where tablename = 'chunks' and indexdef ilike '%using hnsw%'`)).rows as { indexname: string; indexdef: string }[];
    for (const ix of indexes) await exec(`drop index ${ix.indexname}`);

    const generator = files ? null : new ChunkGenerator(input.seed, topics, centres, embedder.dimension);
    // The files corpus: file by file, paragraph by paragraph, each embedded by the app's embedder.
    const paragraphs = files ? files.files.flatMap((doc, d) => doc.map((text, position) => ({ text, d: datasources[d]!, position }))) : [];
    const BATCH = 1000;
    const positions = new Map<string, number>();
    const pickDatasource = rng(input.seed ^ 0xd5);
    for (let start = 0; start < input.chunks; start += BATCH) {
      const n = Math.min(BATCH, input.chunks - start);
      const rows = files
        ? await (async () => {
            const slice = paragraphs.slice(start, start + n);
            const vectors = await embedder.embedDocuments(slice.map((p) => p.text));
            return slice.map((p, i) => ({ ...p, vector: vectorLiteral(vectors[i]!) }));
          })()
        : Array.from({ length: n }, () => {
        const c = generator!.next();
        const d = datasources[Math.floor(pickDatasource() * datasources.length)]!;
        const position = positions.get(d.id) ?? 0;
        positions.set(d.id, position + 1);
        return { ...c, d, position };
      });
      await exec(
        `insert into chunks (id, datasource_id, datastore_id, custom_id, position, page, text, content_hash, embedding, dimension, metadata)
         select id, datasource_id, $1::uuid, custom_id, position, null, text, md5(text), embedding::vector, $2, metadata
         from unnest($3::uuid[], $4::uuid[], $5::text[], $6::int[], $7::text[], $8::text[], $9::jsonb[])
           as t(id, datasource_id, custom_id, position, text, embedding, metadata)`,
        [
          input.datastoreId,
          embedder.dimension,
          rows.map(() => newId()),
          rows.map((r) => r.d.id),
          rows.map((r) => r.d.customId),
          rows.map((r) => r.position),
          rows.map((r) => r.text),
          rows.map((r) => r.vector),
          rows.map((r) => JSON.stringify(files ? { source: r.d.name } : { source: `https://docs.example.test/${r.d.customId}` })),
        ],
      );
    }
    const tInsert = performance.now();
    await exec(`set maintenance_work_mem = '1GB'`);
    for (const ix of indexes) await exec(ix.indexdef);
    const tIndex = performance.now();
    await exec(`update datasources d set chunk_count = c.n from (select datasource_id, count(*)::int as n from chunks where datastore_id = $1 group by 1) c where c.datasource_id = d.id`, [input.datastoreId]);
    // As a datastore at rest: autovacuum would have merged the full-text index's pending entries.
    await exec('vacuum (analyze) chunks');
    await exec('analyze datasources');
    const [versions] = (await exec(`select current_setting('server_version') as server, (select extversion from pg_extension where extname = 'vector') as pgvector`)).rows;
    return {
      organizationId,
      datasources: datasources.map(({ id, customId }) => ({ id, customId })),
      queries,
      versions,
      indexes: indexes.map((i) => i.indexdef),
      seconds: {
        centres: (tCentres - t0) / 1000,
        insert: (tInsert - tCentres) / 1000,
        index: (tIndex - tInsert) / 1000,
        total: (performance.now() - t0) / 1000,
      },
    };
  } finally {
    await close();
  }
}

/** The corpus seeded by an earlier run into a kept database, when it is complete. */
async function existing(input: Omit<SeedInput, 'datastoreId'> & { caller?: 'member' | 'anonymous' }) {
  const { exec, close } = await seedSession();
  try {
    const found = (await exec(
      `select d.id from datastores d where d.name = $1 and (select count(*) from chunks c where c.datastore_id = d.id) = $2 order by d.created_at desc limit 1`,
      [corpusName(input), input.chunks],
    )).rows[0];
    if (!found) return {};
    const datastoreId = found.id as string;
    const datasources = (await exec(`select id, custom_id from datasources where datastore_id = $1 order by custom_id`, [datastoreId])).rows;
    if (datasources.length !== input.datasources) return {};
    const hnsw = (await exec(`select indexdef from pg_indexes where tablename = 'chunks' and indexdef ilike '%using hnsw%'`)).rows;
    if (!hnsw.length) return {};
    const [versions] = (await exec(`select current_setting('server_version') as server, (select extversion from pg_extension where extname = 'vector') as pgvector`)).rows;
    // The organization that seeded it kept no key: the corpus moves to a new one, whose key this run uses.
    let apiKey: string | undefined;
    if (input.caller === 'member') {
      const owner = await running.services.auth.setup(running.db.orm.em.fork(), { organizationName: 'Bench', email: `bench-query-${process.pid}-${Date.now()}@example.test` });
      await exec(`update datastores set organization_id = $2 where id = $1`, [datastoreId, owner.organizationId]);
      await exec(`update datasources set organization_id = $2 where datastore_id = $1`, [datastoreId, owner.organizationId]);
      apiKey = owner.apiKey;
    }
    return {
      apiKey,
      datastoreId,
      datasources: datasources.map((d) => ({ id: d.id as string, customId: d.custom_id as string })),
      queries: input.corpus === 'files' ? filesCorpus(input.seed, input.datasources, input.chunks / input.datasources, input.queries).queries : corpus(input.seed, input.clusters, input.queries).queries,
      versions,
      indexes: hnsw.map((i) => i.indexdef),
      seconds: { centres: 0, insert: 0, index: 0, total: 0 },
    };
  } finally {
    await close();
  }
}

async function embed(texts: string[]) {
  const vectors: number[][] = [];
  const ms: number[] = [];
  for (const text of texts) {
    const t0 = performance.now();
    vectors.push(await embedQuery(text));
    ms.push(performance.now() - t0);
  }
  return { vectors, ms };
}

/** The statement on the PGlite instance itself (the app's session settings apply); timed here. */
async function sql(input: { settings: string[]; sql: string; params: unknown[] }) {
  if (!pglite) throw new Error('/sql is for the embedded database; use a pg client for PostgreSQL');
  const t0 = performance.now();
  if (!input.settings.length) {
    const { rows } = await pglite.query(input.sql, input.params);
    return { rows, ms: performance.now() - t0 };
  }
  const rows = await pglite.transaction(async (tx) => {
    for (const s of input.settings) await tx.exec(s);
    return (await tx.query(input.sql, input.params)).rows;
  });
  return { rows, ms: performance.now() - t0 };
}

// What the app itself spends, per REST request: the embedding and the SQL statement
// (searchByVector through the ORM's connection).
const spent = { embed: [] as number[], search: [] as number[] };
const retrieval = running.services.retrieval;
const searchByVector = retrieval.searchByVector.bind(retrieval);
retrieval.searchByVector = async (...args: Parameters<typeof searchByVector>) => {
  const t0 = performance.now();
  try {
    return await searchByVector(...args);
  } finally {
    spent.search.push(performance.now() - t0);
  }
};
const embedQuery = embedder.embedQuery.bind(embedder);
(embedder as { embedQuery: typeof embedQuery }).embedQuery = async (...args: Parameters<typeof embedQuery>) => {
  const t0 = performance.now();
  try {
    return await embedQuery(...args);
  } finally {
    spent.embed.push(performance.now() - t0);
  }
};
/** The app's own searchByVector on a fresh EntityManager, without HTTP or GraphQL, timed here. */
async function search(input: { datastoreIds: string[]; query: string; vector: number[]; topK: number; filters: Record<string, string[]> }) {
  const em = running.db.orm.em.fork();
  const t0 = performance.now();
  const rows = await searchByVector(em as never, input.datastoreIds, input.query, input.vector, input.topK, input.filters);
  return { rows, ms: performance.now() - t0 };
}

async function stats() {
  const out = { embed: spent.embed.splice(0), search: spent.search.splice(0) };
  return out;
}

async function cache(input: { entries: number }) {
  (retrieval as unknown as { queryVectors: QueryVectors }).queryVectors = new QueryVectors(input.entries);
  return {};
}

const routes: Record<string, (body: any) => Promise<unknown>> = { '/seed': seed, '/existing': existing, '/embed': (b) => embed(b.texts), '/sql': sql, '/stats': stats, '/search': search, '/cache': cache };

const side = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const route = routes[req.url ?? ''];
    const reply = (status: number, body: unknown) => {
      const json = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
      res.end(json);
    };
    if (!route) return reply(404, { error: `no ${req.url}` });
    route(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')).then(
      (out) => reply(200, out),
      (err: unknown) => reply(500, { error: err instanceof Error ? err.stack : String(err) }),
    );
  });
});
await new Promise<void>((resolve) => side.listen(0, '127.0.0.1', resolve));
process.stdout.write(`SIDE http://127.0.0.1:${(side.address() as AddressInfo).port}\n`);
process.stdout.write(`LISTENING http://127.0.0.1:${running.port}\n`);
// Apollo Server installs its own SIGTERM handler (stopOnTerminationSignals defaults to on outside
// NODE_ENV=test); together with ours, shutdown never finishes. Ours alone stops cleanly.
process.removeAllListeners('SIGTERM');
process.on('SIGTERM', () => {
  side.close();
  side.closeAllConnections();
  void running.stop().then(() => process.exit(0));
});
