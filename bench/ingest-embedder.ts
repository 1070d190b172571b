/**
 * The OpenAI-compatible test server (test/support/openai-server.ts) as bench:ingest's embedder,
 * in a process of its own so its hashing never shares the service's event loop. Vectors of
 * EMBEDDING_DIMENSION (512) dimensions; EMBEDDING_DELAY_MS (0) holds every embeddings call that long
 * (bench:scale's remote endpoint). Prints `LISTENING <base url>` (ends with /v1).
 */
import { startOpenAiTestServer } from '../test/support/openai-server.ts';

const server = await startOpenAiTestServer({ embeddingDimension: Number(process.env.EMBEDDING_DIMENSION ?? 512) });
server.setDelay('/v1/embeddings', Number(process.env.EMBEDDING_DELAY_MS ?? 0));
// The server records every request for tests; a benchmark has no use for that memory.
setInterval(() => (server.requests.length = 0), 1000).unref();
process.stdout.write(`LISTENING ${server.url}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
