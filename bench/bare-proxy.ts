/**
 * bench:stream's floor: the least a streamed answer can cost in Node on this machine, with none of
 * the service's parts. A bare node:http server that, for `POST /query {query, visitorId}`, stores
 * the question (one INSERT, on PostgreSQL when DATABASE_URL is set; no statement otherwise), asks
 * the model server for a streamed completion over a kept-alive node:http agent, writes each token
 * as an `event: answer` frame as it arrives, then `data: [DONE]`, and stores the answer (a second
 * INSERT). No authentication, limits, GraphQL, ORM, LangChain, conversation history or logs: what
 * the service does beyond this is what its ratio over this one measures.
 *
 * Env: MODEL_URL (the model server's base URL, ending /v1), DATABASE_URL (optional). Prints
 * `LISTENING <url>`.
 */
import http from 'node:http';
import { createParser } from 'eventsource-parser';
import pg from 'pg';
import { chatRequest } from './lib.ts';

const modelUrl = new URL(`${process.env.MODEL_URL!.replace(/\/+$/, '')}/chat/completions`);
const databaseUrl = process.env.DATABASE_URL || '';
// The service's pool size and model sockets (config.ts defaults), so the floor is not held back by fewer.
const db = databaseUrl ? new pg.Pool({ connectionString: databaseUrl, max: 20 }) : null;
await db?.query('create table if not exists bench_bare_turns (id bigserial primary key, visitor text not null, role text not null, text text not null, created_at timestamptz not null default now())');
const modelAgent = new http.Agent({ keepAlive: true, maxSockets: 4096 });

const store = (visitor: string, role: string, text: string) => db?.query('insert into bench_bare_turns (visitor, role, text) values ($1, $2, $3)', [visitor, role, text]);

const server = http.createServer((req, res) => {
  const body: Buffer[] = [];
  req.on('data', (d: Buffer) => body.push(d));
  req.on('end', () => {
    void answer(Buffer.concat(body).toString('utf8'), res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`data: [ERROR] ${String(err)}\n\n`);
    });
  });
});

async function answer(raw: string, res: http.ServerResponse): Promise<void> {
  const { query, visitorId } = JSON.parse(raw) as { query: string; visitorId: string };
  await store(visitorId, 'user', query);
  const request = Buffer.from(JSON.stringify(chatRequest(query)));
  const text = await new Promise<string>((resolve, reject) => {
    let out = '';
    const parser = createParser({
      onEvent(e) {
        if (e.data === '[DONE]') return;
        const token = (JSON.parse(e.data) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content;
        if (!token) return;
        if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(`event: answer\ndata: ${token}\n\n`);
        out += token;
      },
    });
    const call = http.request(modelUrl, { method: 'POST', agent: modelAgent, headers: { 'content-type': 'application/json', authorization: 'Bearer bench', 'content-length': request.length } }, (m) => {
      m.setEncoding('utf8');
      m.on('data', (chunk: string) => parser.feed(chunk));
      m.on('end', () => resolve(out));
      m.on('error', reject);
    });
    call.on('error', reject);
    call.end(request);
  });
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.end('data: [DONE]\n\n');
  await store('-', 'assistant', text);
}

// The service's listen backlog (src/app.ts), so a burst waits in the accept queue as it does there.
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`LISTENING http://127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => server.close(() => void db?.end().then(() => process.exit(0))));
