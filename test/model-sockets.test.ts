/**
 * A streamed answer holds a connection to the model endpoint from its request to its last
 * token. With a cap of 256 connections (the fixed figure before MODEL_MAX_SOCKETS), the 1,000
 * concurrent streams of `bench:stream` reached the model server in waves, and the later ones
 * waited for whole answers of earlier ones before their first token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createChatModel } from '../src/providers/chat.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { waitFor } from './support/wait.ts';

const STREAMS = 300;

describe('connections to the model endpoint', () => {
  let server: OpenAiTestServer;
  beforeAll(async () => {
    server = await startOpenAiTestServer();
    // No first token for a long while: every stream keeps its connection open meanwhile.
    server.setStreamTiming({ firstTokenDelayMs: 60_000 });
  });
  afterAll(() => server.close());

  it(`carries ${STREAMS} streams at once by default, each its own connection`, async () => {
    const config = loadConfig({ NODE_ENV: 'test', OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'test-key' });
    expect(config.openai?.maxSockets).toBe(4096);
    const chat = createChatModel(config)!;
    const stop = new AbortController();
    const chatRequests = () => server.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
    const streams = Array.from({ length: STREAMS }, async (_, i) => {
      try {
        for await (const _chunk of chat.stream([{ role: 'user', content: `Question ${i}?` }], { model: 'gpt-4o-mini' }, stop.signal));
      } catch {
        // aborted below
      }
    });
    try {
      await waitFor(async () => chatRequests() >= STREAMS, 30_000, `${STREAMS} requests at the model server`);
      expect(chatRequests()).toBe(STREAMS);
    } finally {
      stop.abort();
      await Promise.all(streams);
    }
  });

  it('is bounded by MODEL_MAX_SOCKETS: 0 and non-numbers are refused at start-up', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', OPENAI_API_KEY: 'k', MODEL_MAX_SOCKETS: '0' })).toThrow(/MODEL_MAX_SOCKETS/);
    expect(() => loadConfig({ NODE_ENV: 'test', OPENAI_API_KEY: 'k', MODEL_MAX_SOCKETS: 'many' })).toThrow(/MODEL_MAX_SOCKETS/);
    expect(loadConfig({ NODE_ENV: 'test', OPENAI_API_KEY: 'k', MODEL_MAX_SOCKETS: '64' }).openai?.maxSockets).toBe(64);
  });
});
