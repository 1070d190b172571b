/**
 * npm run bench:query — datastore query latency through REST, next to the identical SQL sent by a
 * bare client in the same run; the hybrid statement next to its vector half alone and to the
 * statement before issue 19's h-query stop (bench/query-before.ts); 10 concurrent
 * clients through REST (query-vector cache off, then on) next to the same SQL at that concurrency;
 * beside them (PostgreSQL, endpoint stand-in) the floor, bench/bare-query.ts, a bare node:http server
 * doing only the embedding call and the statement, with the CPU per request of each process;
 * recall@10 of the vector search against exact search. Each corpus size runs on a server and
 * database of its own (embedded PGlite unless DATABASE_URL is set: then a fresh database per size
 * on that server, dropped at the end), and the growth from the first size to the last is printed.
 *
 * Targets: hybrid statement p50 <= 2 x its vector half's; (REST p50 - embedding p50, the embedding
 * timed inside those requests) <= 1.5 x raw SQL p50; REST p50 at 10 clients <= 1.5 x raw SQL p50
 * at 10 clients; REST - embedding grows <= 1.5 x from the first size to the last; recall@10 >= 0.95.
 * Env: BENCH_CORPUS (clusters: the synthetic clustered corpus; files: issue 19's 100 text files x 100
 *      paragraphs of 700-900 characters, embedded by the endpoint stand-in at 384 dimensions, 10,000 chunks),
 *      BENCH_CHUNKS (50000, files: 10000; a comma-separated list measures each size, e.g. "50000,250000"),
 *      BENCH_ROUNDS (2 passes over the 50 queries per figure),
 *      BENCH_EF_SWEEP (the hnsw.ef_search values of the recall sweep: 40,100,200,400,1000),
 *      BENCH_EMBEDDER (local: the shipped model, as before; endpoint: an OpenAI-compatible stand-in
 *      in a process of its own answering at once, test/support/openai-server.ts's hashed bag of words),
 *      BENCH_CALLER (member: REST with an API key of the datastore's organization; anonymous: without,
 *      so each request also counts a hit on the client's address; a reused kept corpus moves to a new organization for its key),
 *      BENCH_NODE_ARGS (extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
 *      BENCH_DATABASE (PostgreSQL only: databases named <that>_<chunks> on DATABASE_URL's server, kept
 *      after the run; a later run with the same sizes finds its seeded datastore and skips seeding).
 */
import os from 'node:os';
import pg from 'pg';
import { HNSW_EF_SEARCH, scanFor, SMALL_INDEX_CHUNKS, VECTOR_SEARCH_SETTINGS, vectorSessionSql } from '../src/db/vector-index.ts';
import { chunkStatisticsOf, chunkStatisticsSql } from '../src/retrieval/chunk-stats.ts';
import { COMMON_WORD_CHUNKS } from '../src/retrieval/common-words.ts';
import { statementName } from '../src/db/raw.ts';
import { searchSql, type SearchFilters } from '../src/retrieval/retrieval.service.ts';
import { searchSqlBefore } from './query-before.ts';
import { rng } from './corpus.ts';
import { agent, corpusName, cpuMs, describeDatabase, f1, f2, freshDatabase, graphql, keptDatabase, pct, pool, postJson, spawnChild, table } from './lib.ts';

/** clusters: synthetic clustered vectors (below); files: issue 19's corpus of 100-paragraph text files, embedded by the endpoint stand-in at 384 dimensions. */
const CORPUS = process.env.BENCH_CORPUS || 'clusters';
if (CORPUS !== 'clusters' && CORPUS !== 'files') throw new Error('BENCH_CORPUS must be clusters or files');
const FILES = CORPUS === 'files';
const SIZES = (process.env.BENCH_CHUNKS ?? (FILES ? '10000' : '50000')).split(',').map((x) => Number(x.trim()));
if (!SIZES.length || SIZES.some((n) => !Number.isInteger(n) || n < 1000)) throw new Error('BENCH_CHUNKS must be a whole number of at least 1000, or a comma-separated list of them');
const EMBEDDER = process.env.BENCH_EMBEDDER || (FILES ? 'endpoint' : 'local');
if (FILES && (EMBEDDER !== 'endpoint' || SIZES.some((n) => n % 100))) throw new Error('BENCH_CORPUS=files takes BENCH_EMBEDDER=endpoint and sizes in whole files of 100 paragraphs');
const DIMENSION = FILES ? '384' : '512';
if (EMBEDDER !== 'local' && EMBEDDER !== 'endpoint') throw new Error('BENCH_EMBEDDER must be local or endpoint');
const CLUSTERS = FILES ? 0 : 500;
const QUERIES = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TOP_K = 10;
const CONCURRENCY = 10;
const SEED = 42;
const EF_SWEEP = (process.env.BENCH_EF_SWEEP ?? '40,100,200,400,1000').split(',').map(Number);
if (EF_SWEEP.some((ef) => !Number.isInteger(ef) || ef < 1 || ef > 1000)) throw new Error('BENCH_EF_SWEEP must be a comma-separated list of whole numbers from 1 to 1000');
const QUERY_CACHE = 1000;
/**
 * The "ties" column of the recall table counts a returned chunk as found when its cosine distance
 * is at most the exact 10th's plus this (ann-benchmarks' recall rule, its default epsilon): a chunk
 * as near as the true 10th is an equally right answer. recall@10 (the target) counts ids only.
 */
const TIE_EPSILON = 1e-3;
const CALLER = process.env.BENCH_CALLER || 'member';
if (CALLER !== 'member' && CALLER !== 'anonymous') throw new Error('BENCH_CALLER must be member or anonymous');

const log = (s = '') => process.stdout.write(`${s}\n`);
const progress = (s: string) => process.stderr.write(`bench:query: ${s}\n`);

const adminUrl = process.env.DATABASE_URL || '';
const keep = process.env.BENCH_DATABASE || '';
if (keep && !/^[a-z_][a-z0-9_]*$/.test(keep)) throw new Error('BENCH_DATABASE must be a plain lower-case identifier');
if (keep && !adminUrl) throw new Error('BENCH_DATABASE needs DATABASE_URL (the embedded database lives in memory)');

/** What the growth table compares between sizes. */
interface Summary {
  chunks: number;
  restLessEmbedding: Map<string, number>;
  statement: Map<string, { hybrid: number; vector: number; before: number }>;
}

const endpoint = EMBEDDER === 'endpoint' ? await spawnChild('bench/ingest-embedder.ts', { EMBEDDING_DIMENSION: DIMENSION, EMBEDDING_DELAY_MS: '0' }) : null;
const embedderEnv: Record<string, string> = endpoint ? { OPENAI_BASE_URL: endpoint.url, EMBEDDING_MODEL: 'text-embedding-3-small', EMBEDDING_DIMENSION: DIMENSION } : {};
const summaries: Summary[] = [];
try {
  for (const chunks of SIZES) summaries.push(await measure(chunks));
  if (summaries.length > 1) {
    const first = summaries[0]!;
    const last = summaries[summaries.length - 1]!;
    const at = (n: number) => n.toLocaleString('en');
    log('');
    log(`Growth from ${at(first.chunks)} to ${at(last.chunks)} chunks (p50 ms; target: REST - embedding grows <= 1.5x)`);
    const rows: (string | number)[][] = [
      ['filter', `REST-emb ${at(first.chunks)}`, `REST-emb ${at(last.chunks)}`, 'growth', 'target', `hybrid/vector ${at(first.chunks)}`, `hybrid/vector ${at(last.chunks)}`],
    ];
    // The modes in the same order at every size; their names may differ (the files corpus has a datasource per 100 chunks).
    const lastNames = [...last.restLessEmbedding.keys()];
    [...first.restLessEmbedding].forEach(([name, a], i) => {
      const lastName = lastNames[i]!;
      const b = last.restLessEmbedding.get(lastName)!;
      const sa = first.statement.get(name)!;
      const sb = last.statement.get(lastName)!;
      const label = name === lastName ? name : `${name} / ${lastName.replace(/^\S+ /, '')}`;
      rows.push([label, f1(a), f1(b), `${f2(b / a)}x`, b / a <= 1.5 ? '<=1.5 ok' : '<=1.5 MISSED', `${f2(sa.hybrid / sa.vector)}x`, `${f2(sb.hybrid / sb.vector)}x`]);
    });
    log(table(rows));
  }
} finally {
  await endpoint?.stop();
  agent.destroy();
}

async function measure(CHUNKS: number): Promise<Summary> {
  // ---- the server, on a database of its own ----------------------------------------------

  const loadAtStart = os.loadavg().map(f2).join(', ');
  const DATASOURCES = FILES ? CHUNKS / 100 : 300;
  const database = adminUrl ? (keep ? await keptDatabase(adminUrl, `${keep}_${CHUNKS}`) : await freshDatabase(adminUrl, `agentbase_bench_query_${process.pid}_${CHUNKS}`)) : null;
  const server = await spawnChild('bench/query-server.ts', { ...embedderEnv, DATABASE_URL: database ? database.url : '' }, (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean));
  const side = server.lines.SIDE!;
  let bare: pg.Client[] = [];
  /** The floor's server (bench/bare-query.ts), PostgreSQL with the endpoint stand-in only. */
  let floor: Awaited<ReturnType<typeof spawnChild>> | null = null;
  /** The datastore's organization's key (BENCH_CALLER=member, on a corpus seeded by this run); anonymous otherwise. */
  let memberKey: string | null = null;

  try {
    const corpusSpec = { chunks: CHUNKS, datasources: DATASOURCES, clusters: CLUSTERS, queries: QUERIES, seed: SEED, corpus: CORPUS };
    // A kept database may hold this corpus already (same BENCH_CHUNKS and generator settings).
    const found = keep ? await postJson(`${side}/existing`, { ...corpusSpec, caller: CALLER }) : null;
    if (found && found.status !== 200) throw new Error(`existing: ${JSON.stringify(found.body)}`);
    let datastoreId: string;
    let seeded;
    if (found?.body.datastoreId) {
      datastoreId = found.body.datastoreId;
      progress(`reusing the seeded datastore of database ${keep} (${CHUNKS} chunks)`);
      seeded = found;
      memberKey = found.body.apiKey ?? null;
    } else {
      const signUp = await graphql(
        server.url,
        `mutation { signUp(input: { email: "bench-query-${process.pid}-${Date.now()}@example.test", password: "bench-password", organizationName: "Bench" }) { token } }`,
      );
      const token: string = signUp.signUp.token;
      if (CALLER === 'member') memberKey = (await graphql(server.url, `mutation { createApiKey(input: { name: "bench" }) { key } }`, {}, token)).createApiKey.key;
      const created = await graphql(
        server.url,
        `
          mutation ($name: String!) {
            createDatastore(input: { name: $name, visibility: public }) {
              id
            }
          }
        `,
        { name: corpusName(corpusSpec) },
        token,
      );
      datastoreId = created.createDatastore.id;
      progress(`seeding ${CHUNKS} chunks (bulk SQL, then one HNSW build)…`);
      seeded = await postJson(`${side}/seed`, { datastoreId, ...corpusSpec });
      if (seeded.status !== 200) throw new Error(`seed: ${JSON.stringify(seeded.body)}`);
    }
    const seed = seeded.body as {
      datasources: { id: string; customId: string }[];
      queries: { text: string; cluster: number }[];
      versions: { server: string; pgvector: string };
      seconds: { centres: number; insert: number; index: number; total: number };
    };

    // ---- the queries: texts, their vectors (the app's embedder), three filter modes ------

    const pick = rng(SEED ^ 0xf17);
    const sample = <T>(list: T[], n: number) => {
      const copy = [...list];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(pick() * (i + 1));
        [copy[i], copy[j]] = [copy[j]!, copy[i]!];
      }
      return copy.slice(0, n);
    };
    const modes: { name: string; filters: (q: number) => SearchFilters }[] = [];
    const customIds = seed.queries.map(() => sample(seed.datasources, 5).map((d) => d.customId));
    const datasourceIds = seed.queries.map(() => sample(seed.datasources, 10).map((d) => d.id));
    modes.push({ name: 'unfiltered', filters: () => ({}) });
    modes.push({ name: `custom_ids (5 of ${DATASOURCES})`, filters: (q) => ({ custom_ids: customIds[q]! }) });
    modes.push({ name: `datasource_ids (10 of ${DATASOURCES})`, filters: (q) => ({ datasource_ids: datasourceIds[q]! }) });

    const texts = seed.queries.map((q) => q.text);
    progress('timing the embedding of the query texts…');
    await postJson(`${side}/embed`, { texts }); // warm-up
    const embedMs: number[] = [];
    let vectors: number[][] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const e = await postJson<{ vectors: number[][]; ms: number[] }>(`${side}/embed`, { texts });
      embedMs.push(...e.body.ms);
      vectors = e.body.vectors;
    }

    // ---- the bare client ---------------------------------------------------------------

    /**
     * The service's statement, on a session with the service's vector settings (set when the
     * client connects, as the service's connections do). With `settings` (recall measurements
     * only: exact search, the ef_search sweep), one transaction with those SET LOCALs first.
     * PostgreSQL: a `pg` client in this process, timed here, each statement prepared once per
     * connection as the service prepares its search (recall runs, with settings, are not). PGlite: the side channel runs it on
     * the PGlite instance and times it there (no HTTP in the figure).
     */
    type Raw = (settings: string[], sql: string, params: unknown[], client?: number) => Promise<{ rows: any[]; ms: number }>;
    let raw: Raw;
    if (database) {
      bare = await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          const c = new pg.Client({ connectionString: database.url });
          await c.connect();
          await c.query(vectorSessionSql());
          return c;
        }),
      );
      raw = async (settings, sql, params, client = 0) => {
        const c = bare[client]!;
        const t0 = performance.now();
        if (!settings.length) {
          // Prepared, as the service sends its search (rawQuery's `prepared`).
          const { rows } = await c.query({ name: statementName(sql), text: sql, values: params });
          return { rows, ms: performance.now() - t0 };
        }
        await c.query(['begin', ...settings].join('; '));
        try {
          const { rows } = await c.query(sql, params);
          await c.query('commit');
          return { rows, ms: performance.now() - t0 };
        } catch (err) {
          await c.query('rollback');
          throw err;
        }
      };
    } else {
      raw = async (settings, sql, params) => {
        const res = await postJson(`${side}/sql`, { settings, sql, params });
        if (res.status !== 200) throw new Error(`side /sql: ${JSON.stringify(res.body)}`);
        return res.body;
      };
    }

    /** The words the service's text half leaves out and the ef_search its scan runs with (chunk-stats.ts), read as the service reads them. */
    const stats = chunkStatisticsOf((await raw([], chunkStatisticsSql().sql, chunkStatisticsSql().params)).rows[0]);
    const { commonWords } = stats;
    const scan = scanFor(stats.indexed.get(vectors[0]!.length));
    const sqlOf = (q: number, filters: SearchFilters, opts: { efSearch?: number } = {}) =>
      searchSql([datastoreId], texts[q]!, vectors[q]!, TOP_K, filters, { ...scan, efSearch: opts.efSearch ?? scan.efSearch, commonWords });
    // The floor: the same embedding and statement behind a bare node:http server (bench/bare-query.ts).
    floor = database && endpoint ? await spawnChild('bench/bare-query.ts', { EMBEDDINGS_URL: endpoint.url, EMBEDDING_MODEL: embedderEnv.EMBEDDING_MODEL!, DATABASE_URL: database.url }) : null;
    if (floor) await postJson(`${floor.url}/setup`, { datastoreId, topK: TOP_K, scan, commonWords });

    /** The app's cache of query vectors: off (every request embeds its text) unless a figure says otherwise. */
    const setCache = async (entries: number) => {
      const r = await postJson(`${side}/cache`, { entries });
      if (r.status !== 200) throw new Error(`side /cache: ${JSON.stringify(r.body)}`);
    };
    await setCache(0);

    const auth: Record<string, string> = memberKey ? { authorization: `Bearer ${memberKey}` } : {};
    const rest = (q: number, filters: SearchFilters) => postJson<any[]>(`${server.url}/api/datastores/${datastoreId}/query`, { query: texts[q], topK: TOP_K, filters }, auth);

    // ---- latency: sequential, interleaved REST / raw, then concurrency 10 ---------------

    interface Latency {
      rest: number[];
      raw: number[];
      restC: number[];
      restCached: number[];
      rawC: number[];
      /** The floor at 10 clients: bench/bare-query.ts (PostgreSQL with the endpoint stand-in only). */
      bareC: number[];
      /** CPU per request of the 10-client REST phase (cache off), ms: the app's, the embedding endpoint's (its stand-in process). */
      cpuApp: number;
      cpuEmbedder: number;
      /** The floor's CPU per request at 10 clients, ms. */
      cpuFloor: number;
      same: number;
      compared: number;
      results: number[];
      appEmbed: number[];
      appSearch: number[];
    }
    const appStats = async () => (await postJson<{ embed: number[]; search: number[] }>(`${side}/stats`, {})).body;
    const latency = new Map<string, Latency>();
    for (const mode of modes) {
      progress(`latency: ${mode.name}…`);
      const l: Latency = { rest: [], raw: [], restC: [], restCached: [], rawC: [], bareC: [], cpuApp: 0, cpuEmbedder: 0, cpuFloor: 0, same: 0, compared: 0, results: [], appEmbed: [], appSearch: [] };
      /**
       * One query both ways. Which goes first alternates: the first run of a vector reads pages
       * (HNSW graph, heap, TOAST) that the second then finds in shared buffers, which at 50,000
       * chunks can be worth half the statement's time on PostgreSQL.
       */
      const one = async (q: number, record: boolean, restFirst: boolean) => {
        const filters = mode.filters(q);
        const s = sqlOf(q, filters);
        let b = restFirst ? null : await raw([], s.sql, s.params);
        const r = await rest(q, filters);
        if (r.status !== 200) throw new Error(`REST ${r.status}: ${JSON.stringify(r.body)}`);
        b ??= await raw([], s.sql, s.params);
        if (!record) return;
        l.rest.push(r.ms);
        l.raw.push(b.ms);
        l.results.push(r.body.length);
        l.compared++;
        const key = (rows: any[]) => rows.map((x) => `${x.datasource_id}|${Number(x.score).toFixed(6)}|${x.text}`).join('\n');
        if (key(r.body) === key(b.rows)) l.same++;
      };
      for (let q = 0; q < QUERIES; q++) await one(q, false, q % 2 === 0); // warm-up
      await appStats();
      for (let r = 0; r < ROUNDS; r++) for (let q = 0; q < QUERIES; q++) await one(q, true, (q + r) % 2 === 1);
      const spent = await appStats();
      l.appEmbed = spent.embed;
      l.appSearch = spent.search;

      const n = QUERIES * ROUNDS * 2;
      const cpu0 = { app: cpuMs(server.child.pid!), embedder: endpoint ? cpuMs(endpoint.child.pid!) : 0 };
      await pool(n, CONCURRENCY, async (i) => {
        const r = await rest(i % QUERIES, mode.filters(i % QUERIES));
        if (r.status !== 200) throw new Error(`REST ${r.status}`);
        l.restC.push(r.ms);
      });
      l.cpuApp = (cpuMs(server.child.pid!) - cpu0.app) / n;
      l.cpuEmbedder = endpoint ? (cpuMs(endpoint.child.pid!) - cpu0.embedder) / n : 0;
      // The same requests with the vector cache on, starting empty: 4 requests per text, so 3 in 4 find their vector.
      await setCache(QUERY_CACHE);
      await pool(n, CONCURRENCY, async (i) => {
        const r = await rest(i % QUERIES, mode.filters(i % QUERIES));
        if (r.status !== 200) throw new Error(`REST ${r.status}`);
        l.restCached.push(r.ms);
      });
      await setCache(0);
      if (floor) {
        const floorUrl = `${floor.url}/query`;
        for (let q = 0; q < QUERIES; q++) await postJson(floorUrl, { query: texts[q], filters: mode.filters(q) }); // warm-up
        const floorCpu0 = cpuMs(floor.child.pid!);
        await pool(n, CONCURRENCY, async (i) => {
          const r = await postJson<any[]>(floorUrl, { query: texts[i % QUERIES], filters: mode.filters(i % QUERIES) });
          if (r.status !== 200) throw new Error(`bare query ${r.status}: ${JSON.stringify(r.body)}`);
          l.bareC.push(r.ms);
        });
        l.cpuFloor = (cpuMs(floor.child.pid!) - floorCpu0) / n;
      }
      let slot = 0;
      await pool(n, CONCURRENCY, async (i) => {
        const q = i % QUERIES;
        const s = sqlOf(q, mode.filters(q));
        const client = slot++ % CONCURRENCY;
        l.rawC.push((await raw([], s.sql, s.params, client)).ms);
      });
      latency.set(mode.name, l);
    }

    // ---- recall@10 of the vector part ----------------------------------------------------

    /** The service's statement cut after its vector CTE: same expression, filters and limit. */
    const vectorOnly = (q: number, filters: SearchFilters, efSearch?: number) => {
      const s = sqlOf(q, filters, { efSearch });
      const cut = s.sql.indexOf('q as (select');
      if (cut < 0) throw new Error('searchSql changed shape: no q CTE after the vector one to cut at');
      const sql = `${s.sql.slice(0, cut).trimEnd().replace(/,$/, '')}\n    select id::text as id, d from vec order by r limit ${TOP_K}`;
      // The vector CTE's parameters come first: pass exactly those it uses.
      const used = Math.max(...[...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
      return { sql, params: s.params.slice(0, used), settings: [] as string[] };
    };
    const planOf = async (settings: string[], sql: string, params: unknown[]) => {
      // Analyzed: of the statement's two vector branches (exact, through the index), the one that ran.
      const { rows } = await raw(settings, `explain (analyze, costs off, timing off) ${sql}`, params);
      const lines = rows.map((r) => String(r['QUERY PLAN'])).filter((l) => !l.includes('never executed'));
      const scan = lines.find((l) => /hnsw/.test(l))
        ? 'HNSW index scan'
        : (lines
            .find((l) => /(Bitmap Heap Scan|Index Scan|Seq Scan)\b.* on chunks\b/.test(l))
            ?.trim()
            .replace(/^->\s*/, '')
            .replace(/\s+\((cost|actual).*$/, '') ?? '?');
      return scan;
    };

    // ---- the hybrid statement against its vector half alone --------------------------------

    /**
     * The whole statement and its vector CTE alone (what the text half, the scoring of the
     * candidates and the reading of the top K add), sequential, taking turns at going first.
     */
    const statement = new Map<string, { hybrid: number; vector: number; before: number }>();
    for (const mode of modes) {
      progress(`statement cost: ${mode.name}…`);
      const hybrid: number[] = [];
      const vector: number[] = [];
      const before: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        for (let q = 0; q < QUERIES; q++) {
          const s = sqlOf(q, mode.filters(q));
          const v = vectorOnly(q, mode.filters(q));
          const b = searchSqlBefore([datastoreId], texts[q]!, vectors[q]!, TOP_K, mode.filters(q));
          // Each of the three goes first, second and last in turn.
          const runs = [() => raw([], s.sql, s.params).then((x) => hybrid.push(x.ms)), () => raw([], v.sql, v.params).then((x) => vector.push(x.ms)), () => raw([], b.sql, b.params).then((x) => before.push(x.ms))];
          for (let i = 0; i < runs.length; i++) await runs[(q + r + i) % runs.length]!();
        }
      }
      statement.set(mode.name, { hybrid: pct(hybrid, 50), vector: pct(vector, 50), before: pct(before, 50) });
    }

    interface Recall {
      recall: number;
      /** ann-benchmarks' rule: a returned chunk counts when its distance is within TIE_EPSILON of the exact 10th's. */
      tied: number;
      plan: string;
      exactPlan: string;
      annMs: number[];
      exactMs: number[];
      sweep: Map<number, { recall: number; tied: number; ms: number[] }>;
    }
    const recall = new Map<string, Recall>();
    for (const mode of modes) {
      progress(`recall: ${mode.name}…`);
      const first = vectorOnly(0, mode.filters(0));
      const exactSettings = [...first.settings, 'set local enable_indexscan = off'];
      const rec: Recall = {
        recall: 0,
        tied: 0,
        plan: await planOf(first.settings, first.sql, first.params),
        exactPlan: await planOf(exactSettings, first.sql, first.params),
        annMs: [],
        exactMs: [],
        sweep: new Map(),
      };
      if (/hnsw/i.test(rec.exactPlan)) throw new Error('the exact search still uses the HNSW index');
      for (const ef of EF_SWEEP) rec.sweep.set(ef, { recall: 0, tied: 0, ms: [] });
      for (let q = 0; q < QUERIES; q++) {
        const v = vectorOnly(q, mode.filters(q));
        const exact = await raw([...v.settings, 'set local enable_indexscan = off'], v.sql, v.params);
        rec.exactMs.push(exact.ms);
        const truth = new Set(exact.rows.map((r) => r.id as string));
        const bound = Number(exact.rows[exact.rows.length - 1]?.d ?? Infinity) + TIE_EPSILON;
        // This query's share of the exact ten found (by id, and within TIE_EPSILON), added to `into`'s means.
        const count = (rows: Record<string, unknown>[], into: { recall: number; tied: number }) => {
          const of = Math.max(1, truth.size) * QUERIES;
          into.recall += rows.filter((r) => truth.has(r.id as string)).length / of;
          into.tied += rows.filter((r) => Number(r.d) <= bound).length / of;
        };
        const ann = await raw(v.settings, v.sql, v.params);
        rec.annMs.push(ann.ms);
        count(ann.rows, rec);
        for (const ef of EF_SWEEP) {
          const w = vectorOnly(q, mode.filters(q), ef);
          const a = await raw(w.settings, w.sql, w.params);
          count(a.rows, rec.sweep.get(ef)!);
          rec.sweep.get(ef)!.ms.push(a.ms);
        }
      }
      recall.set(mode.name, rec);
    }

    // ---- report --------------------------------------------------------------------------

    const serviceEf = Object.entries(VECTOR_SEARCH_SETTINGS)
      .map(([k, v]) => `${k} = ${v}`)
      .join(', ');
    log(
      `bench:query — ${describeDatabase()}: PostgreSQL ${seed.versions.server}, pgvector ${seed.versions.pgvector}; query embedding: ${EMBEDDER === 'local' ? 'the local model' : 'an OpenAI-compatible stand-in (hashed bag of words, no delay)'}`,
    );
    log(
      `machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}, ${f1(os.totalmem() / 2 ** 30)} GB; load average (1, 5, 15 min) ${loadAtStart} when this size started, ${os.loadavg().map(f2).join(', ')} now`,
    );
    log('');
    log(`==== ${CHUNKS.toLocaleString('en')} chunks ====`);
    log(
      FILES
        ? `corpus: issue 19's, ${DATASOURCES} text files x 100 paragraphs of 700-900 characters (${CHUNKS.toLocaleString('en')} chunks, each embedded by the stand-in at ${vectors[0]!.length} dimensions) in one public datastore`
        : `corpus: ${CHUNKS.toLocaleString('en')} chunks of ${vectors[0]!.length} dimensions in one public datastore, ${DATASOURCES} datasources (each with a custom_id), ${CLUSTERS} clusters`,
    );
    if (found?.body.datastoreId) log(`corpus reused from the kept database ${keep} (seeded by an earlier run)`);
    else log(`seeded in ${f1(seed.seconds.total)} s (cluster centres ${f1(seed.seconds.centres)} s, bulk insert ${f1(seed.seconds.insert)} s, HNSW build ${f1(seed.seconds.index)} s)`);
    log(`${QUERIES} query texts x ${ROUNDS} rounds per figure, topK ${TOP_K}; service settings: ${serviceEf} (the planner's), hnsw.ef_search = ${scan.efSearch} set by the statement for its scan (scanFor: ${HNSW_EF_SEARCH} above ${SMALL_INDEX_CHUNKS.toLocaleString('en')} chunks), searches keeping at most ${scan.exactUpTo.toLocaleString('en')} chunks exact`);
    log('');
    log('Method');
    log(`  REST      POST /api/datastores/{id}/query from this process (node:http, keep-alive), ${memberKey ? "with an API key of the datastore's organization" : 'anonymous (public datastore; each request also counts a hit on its address: one more statement)'},`);
    log('            timed from the request to the last byte; the server runs in a child process.');
    log("  embedding the app's own embedder.embedQuery on the same texts, timed inside the server process.");
    log('  raw SQL   searchSql() of src/retrieval: the same statement, parameters (same vector, filters, ranking) and');
    log("            session settings (set once per connection, as the service's connections have them), sent by a bare client:");
    log(
      database
        ? '            a `pg` client in this process (one statement, no transaction, prepared once per connection, as the service sends it), timed here.'
        : '            PGlite has no second client: a side channel of the benchmark (not of the app) runs the transaction on',
    );
    if (!database) log('            the PGlite instance in the server process and times it there (no HTTP in the figure).');
    log('  order     sequential; for each query REST and raw SQL take turns at going first (the first run of a vector');
    log('            reads the pages the second finds in shared buffers).');
    log('  ratio     (REST p50 - embedding p50) / raw SQL p50, the embedding as timed inside the server during those');
    log('            same requests (the embedding timed apart, below, varies more between runs); target <= 1.5.');
    log('');

    const emb50 = pct(embedMs, 50);
    log(
      `Embedding of the query text (${EMBEDDER === 'local' ? 'local model' : 'OpenAI-compatible stand-in, another process'}), sequential: p50 ${f1(emb50)} ms, p99 ${f1(pct(embedMs, 99))} ms (n=${embedMs.length})`,
    );
    log('');
    log('Latency, sequential (ms)');
    const rows: (string | number)[][] = [['filter', 'REST p50', 'REST p99', 'REST-emb p50', 'raw SQL p50', 'raw SQL p99', 'ratio', 'target', 'rows', 'same as REST']];
    for (const [name, l] of latency) {
      const restLessEmbedding = pct(l.rest, 50) - pct(l.appEmbed, 50);
      const ratio = restLessEmbedding / pct(l.raw, 50);
      rows.push([
        name,
        f1(pct(l.rest, 50)),
        f1(pct(l.rest, 99)),
        f1(restLessEmbedding),
        f1(pct(l.raw, 50)),
        f1(pct(l.raw, 99)),
        `${f2(ratio)}x`,
        ratio <= 1.5 ? '<=1.5 ok' : '<=1.5 MISSED',
        Math.min(...l.results),
        `${l.same}/${l.compared}`,
      ]);
    }
    log(table(rows));
    log('');
    log('Where the REST time goes, sequential (p50 ms; "app" = timed inside the server around embedQuery and searchByVector)');
    const brows: (string | number)[][] = [['filter', 'REST', 'app embedQuery', 'app searchByVector', 'raw SQL', 'searchByVector - raw', 'HTTP + GraphQL + rest']];
    for (const [name, l] of latency) {
      const rest = l.rest.map((ms, i) => ms - (l.appEmbed[i] ?? NaN) - (l.appSearch[i] ?? NaN));
      brows.push([name, f1(pct(l.rest, 50)), f1(pct(l.appEmbed, 50)), f1(pct(l.appSearch, 50)), f1(pct(l.raw, 50)), f1(pct(l.appSearch, 50) - pct(l.raw, 50)), f1(pct(rest, 50))]);
    }
    log(table(brows));
    log('');
    log(`Statement cost, sequential, bare client (p50 ms): the service's statement next to its vector half alone (target <= 2),`);
    log(`and the statement before issue 19's h-query stop (bench/query-before.ts) on the same queries, taking turns`);
    log(`(text half leaving out ${commonWords.length} common words, in more than ${COMMON_WORD_CHUNKS.toLocaleString('en')} chunks by ANALYZE's statistics)`);
    const strows: (string | number)[][] = [['filter', 'hybrid', 'vector half', 'ratio', 'target', 'hybrid before', 'before / vector half']];
    for (const [name, st] of statement) strows.push([name, f1(st.hybrid), f1(st.vector), `${f2(st.hybrid / st.vector)}x`, st.hybrid / st.vector <= 2 ? '<=2 ok' : '<=2 MISSED', f1(st.before), `${f2(st.before / st.vector)}x`]);
    log(table(strows));
    log('');
    log(`Latency, ${CONCURRENCY} concurrent clients (ms; REST includes the embedding; "cached": the app's query-vector cache on, starting empty, 3 requests in 4 repeat a text)`);
    const crows: (string | number)[][] = [['filter', 'REST p50', 'REST p99', 'cached p50', 'cached p99', 'raw SQL p50', 'raw SQL p99', 'REST/raw', 'cached/raw', 'target', ...(floor ? ['floor p50', 'floor/raw', 'REST/floor'] : [])]];
    for (const [name, l] of latency) {
      const cold = pct(l.restC, 50) / pct(l.rawC, 50);
      const warm = pct(l.restCached, 50) / pct(l.rawC, 50);
      crows.push([
        name,
        f1(pct(l.restC, 50)),
        f1(pct(l.restC, 99)),
        f1(pct(l.restCached, 50)),
        f1(pct(l.restCached, 99)),
        f1(pct(l.rawC, 50)),
        f1(pct(l.rawC, 99)),
        `${f2(cold)}x`,
        `${f2(warm)}x`,
        cold <= 1.5 ? '<=1.5 ok' : warm <= 1.5 ? '<=1.5 cached only' : '<=1.5 MISSED',
        ...(floor ? [f1(pct(l.bareC, 50)), `${f2(pct(l.bareC, 50) / pct(l.rawC, 50))}x`, `${f2(pct(l.restC, 50) / pct(l.bareC, 50))}x`] : []),
      ]);
    }
    log(table(crows));
    if (floor) log('floor: bench/bare-query.ts, a bare node:http server doing only the embedding call and the same prepared statement (no auth, limits, GraphQL, validation, metrics, logs), same 10 clients');
    log(`CPU per request of the 10-client REST phase (ms, from /proc): ${[...latency].map(([name, l]) => `${name}: app ${f2(l.cpuApp)}${endpoint ? `, embedding endpoint ${f2(l.cpuEmbedder)}` : ''}${floor ? ` (the floor ${f2(l.cpuFloor)})` : ''}`).join('; ')}`);
    log('');
    log(`Recall@10 of the vector part (the service's vector CTE, top 10) against exact search (same statement with`);
    log(`enable_indexscan = off), ${QUERIES} queries per row; target >= 0.95`);
    const rrows: (string | number)[][] = [['filter', 'recall@10', 'target', `ties within ${TIE_EPSILON}`, 'plan', 'ANN p50 ms', 'exact plan', 'exact p50 ms']];
    for (const [name, r] of recall) rrows.push([name, f2(r.recall), r.recall >= 0.95 ? '>=0.95 ok' : '>=0.95 MISSED', f2(r.tied), r.plan, f1(pct(r.annMs, 50)), r.exactPlan, f1(pct(r.exactMs, 50))]);
    log(table(rrows));
    log('');
    log(`hnsw.ef_search sweep (the ef_search the statement sets for its scan; iterative_scan = relaxed_order): recall@10 / ties within ${TIE_EPSILON} / p50 ms`);
    const srows: (string | number)[][] = [['filter', ...EF_SWEEP.map((ef) => `ef ${ef}`)]];
    for (const [name, r] of recall) srows.push([name, ...EF_SWEEP.map((ef) => `${f2(r.sweep.get(ef)!.recall)} / ${f2(r.sweep.get(ef)!.tied)} / ${f1(pct(r.sweep.get(ef)!.ms, 50))}`)]);
    log(table(srows));
    const summary: Summary = { chunks: CHUNKS, restLessEmbedding: new Map(), statement };
    for (const [name, l] of latency) summary.restLessEmbedding.set(name, pct(l.rest, 50) - pct(l.appEmbed, 50));
    return summary;
  } finally {
    await Promise.all(bare.map((c) => c.end().catch(() => {})));
    await server.stop();
    await floor?.stop();
    if (!keep) await database?.drop();
  }
}
