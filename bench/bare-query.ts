/**
 * bench:query's floor for a datastore query: the least a query over HTTP can cost in Node on this
 * machine, with none of the service's parts. A bare node:http server that, for
 * `POST /query {query, filters}`, embeds the text at the OpenAI-compatible endpoint (one
 * kept-alive node:http call, base64 answer), runs the service's own statement (searchSql, prepared,
 * on a pool of 20 connections with the service's vector session settings) and answers the rows
 * as JSON. No authentication, limits, GraphQL, validation, metrics or logs: what the service does
 * beyond this is what its ratio over this one measures. PostgreSQL only.
 *
 * Env: EMBEDDINGS_URL (base URL, ending /v1), EMBEDDING_MODEL, DATABASE_URL. `POST /setup
 * {datastoreId, topK, scan, commonWords}` first (what the bench read as the service reads it).
 * Prints `LISTENING <url>`.
 */
import http from 'node:http';
import pg from 'pg';
import { statementName } from '../src/db/raw.ts';
import { vectorSessionSql } from '../src/db/vector-index.ts';
import { searchSql, type SearchFilters, type SearchOptions } from '../src/retrieval/retrieval.service.ts';

const embeddingsUrl = new URL(`${process.env.EMBEDDINGS_URL!.replace(/\/+$/, '')}/embeddings`);
const model = process.env.EMBEDDING_MODEL!;
const db = new pg.Pool({ connectionString: process.env.DATABASE_URL!, max: 20 });
db.on('connect', (c) => void c.query(vectorSessionSql()));
const embedAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let setup: { datastoreId: string; topK: number; scan: SearchOptions; commonWords: string[] } | null = null;

const embed = (text: string) =>
  new Promise<number[]>((resolve, reject) => {
    const body = Buffer.from(JSON.stringify({ model, input: [text], encoding_format: 'base64' }));
    const req = http.request(embeddingsUrl, { method: 'POST', agent: embedAgent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const b64 = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { data: { embedding: string }[] }).data[0]!.embedding;
        const bytes = Buffer.from(b64, 'base64');
        resolve(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });

async function answer(path: string | undefined, raw: string): Promise<unknown> {
  if (path === '/setup') {
    setup = JSON.parse(raw);
    return {};
  }
  const { query, filters } = JSON.parse(raw) as { query: string; filters: SearchFilters };
  const s = setup!;
  const vector = await embed(query);
  const { sql, params } = searchSql([s.datastoreId], query, vector, s.topK, filters, { ...s.scan, commonWords: s.commonWords });
  return (await db.query({ name: statementName(sql), text: sql, values: params })).rows;
}

const server = http.createServer((req, res) => {
  const body: Buffer[] = [];
  req.on('data', (d: Buffer) => body.push(d));
  req.on('end', () => {
    answer(req.url, Buffer.concat(body).toString('utf8')).then(
      (out) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(out));
      },
      (err: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: String(err) }));
      },
    );
  });
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`LISTENING http://127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => server.close(() => void db.end().then(() => process.exit(0))));
