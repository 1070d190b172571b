/**
 * The OpenAI-compatible test server (test/support/openai-server.ts) in a process of its own,
 * for bench:stream: FIRST_TOKEN_DELAY_MS (50) before the first token, TOKEN_DELAY_MS (5)
 * between tokens, and the fixed reply REPLY. Prints `LISTENING <base url>` (ends with /v1).
 */
import { startOpenAiTestServer } from '../test/support/openai-server.ts';

const server = await startOpenAiTestServer();
server.setStreamTiming({
  firstTokenDelayMs: Number(process.env.FIRST_TOKEN_DELAY_MS ?? 50),
  tokenDelayMs: Number(process.env.TOKEN_DELAY_MS ?? 5),
});
const reply = process.env.REPLY || 'A fixed reply for the benchmark.';
server.setChatReply(() => reply);
// The server records every request for tests; a benchmark has no use for that memory.
setInterval(() => (server.requests.length = 0), 1000).unref();
process.stdout.write(`LISTENING ${server.url}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
