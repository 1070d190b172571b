/**
 * A local stand-in for a rerank endpoint, speaking the `/rerank` protocol that Cohere and Jina
 * serve: POST `{model, query, documents, top_n}` → `{results: [{index, relevance_score}]}`, best
 * first. Its ordering is whatever the test sets (by default: how many of the query's words a
 * document contains); it shows the plumbing, not a model's quality.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RerankRequest {
  body: { model?: string; query: string; documents: string[]; top_n?: number };
  authorization: string | undefined;
}

export interface RerankTestServer {
  url: string;
  requests: RerankRequest[];
  /** Scores for the documents of a request, higher first. */
  setScorer(scorer: (query: string, documents: string[]) => number[]): void;
  /** Answer every request with this status instead (null: answer normally). */
  failWith(status: number | null): void;
  close(): Promise<void>;
}

const wordsOf = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);
const sharedWords = (query: string, documents: string[]) => {
  const asked = wordsOf(query);
  return documents.map((d) => [...wordsOf(d)].filter((w) => asked.has(w)).length);
};

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

export async function startRerankTestServer(): Promise<RerankTestServer> {
  const requests: RerankRequest[] = [];
  let scorer = sharedWords;
  let failure: number | null = null;
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/rerank') {
      res.writeHead(404).end();
      return;
    }
    const body = await readJson(req);
    requests.push({ body, authorization: req.headers.authorization });
    if (failure) {
      res.writeHead(failure, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'stand-in failure' }));
      return;
    }
    const scores = scorer(body.query, body.documents);
    const results = scores
      .map((relevance_score, index) => ({ index, relevance_score }))
      .sort((a, b) => b.relevance_score - a.relevance_score)
      .slice(0, body.top_n ?? scores.length);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'stand-in', results }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/rerank`,
    requests,
    setScorer: (fn) => {
      scorer = fn;
    },
    failWith: (status) => {
      failure = status;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
