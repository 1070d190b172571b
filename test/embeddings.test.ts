import { ChatOpenAI } from '@langchain/openai';
import type { AIMessageChunk } from '@langchain/core/messages';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../src/config.ts';
import { createEmbedder, EmbeddingError, loadLocalModel, type Embedder } from '../src/providers/embeddings.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';

const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const norm = (a: number[]) => Math.sqrt(dot(a, a));

type EmbeddingConfig = Pick<Config, 'openai' | 'embedding'>;

describe('local embedder (Universal Sentence Encoder shipped in npm)', () => {
  const config: EmbeddingConfig = {
    openai: null,
    embedding: { provider: 'local', model: 'universal-sentence-encoder', dimension: 512, batchSize: 64 },
  };
  let embedder: Embedder;

  beforeAll(async () => {
    const started = performance.now();
    await loadLocalModel();
    console.info(`local embedding model loaded in ${Math.round(performance.now() - started)} ms`);
    embedder = createEmbedder(config);
  });

  it('describes itself and returns 512-dimension unit vectors', async () => {
    expect(embedder).toMatchObject({ provider: 'local', model: 'universal-sentence-encoder', dimension: 512 });
    const [a, b] = await embedder.embedDocuments(['The cat sat on the mat.', 'Quarterly revenue grew by 12 percent.']);
    const q = await embedder.embedQuery('A kitten resting on a rug');
    for (const v of [a!, b!, q]) {
      expect(v).toHaveLength(512);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect(dot(q, a!)).toBeGreaterThan(dot(q, b!));
  });

  it('ranks the passage a paraphrased question is about first', async () => {
    const passages = [
      'To bake bread, mix flour, water, yeast and salt, knead the dough for ten minutes, let it rise for an hour, then put it in a hot oven until the crust is golden.',
      'The Moon circles the Earth roughly every 27 days; its phases come from the changing angle at which we see the sunlit half.',
      'A savings account pays interest on deposits. With compounding, earnings are added to the balance and themselves earn more.',
      'Regular aerobic exercise such as running or swimming strengthens the heart and lowers blood pressure.',
      'Reset your password from the login page: click the reset link, enter your email address and follow the instructions we send you.',
      'Citizens of many countries need a visa to enter; apply at the embassy at least six weeks before the trip, with your passport and two photos.',
    ];
    const questions = [
      'How do I make a loaf at home?',
      'Why does our natural satellite look different over the month?',
      'How can cash I put in a bank grow over time?',
      'What physical activity is good for cardiovascular fitness?',
      'I no longer remember how to sign in to my profile; how do I regain access?',
      'What paperwork is required before flying abroad?',
    ];
    const docs = await embedder.embedDocuments(passages);
    let right = 0;
    for (const [i, question] of questions.entries()) {
      const q = await embedder.embedQuery(question);
      const scores = docs.map((d) => dot(q, d));
      if (scores.indexOf(Math.max(...scores)) === i) right++;
    }
    console.info(`paraphrase ranking: ${right}/${questions.length} right passage first`);
    expect(right).toBeGreaterThanOrEqual(5);
  });

  it('embeds 100 texts in one call, in order, empty strings included', async () => {
    const texts = Array.from({ length: 100 }, (_, i) =>
      i === 40 || i === 99 ? '' : `Item ${i}: notes about ${['invoices', 'rivers', 'guitars', 'vaccines', 'satellites'][i % 5]} and topic ${i}.`,
    );
    const vectors = await embedder.embedDocuments(texts);
    expect(vectors).toHaveLength(100);
    for (const v of vectors) {
      expect(v).toHaveLength(512);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    // Same vector as embedding the text alone: nothing shifted, even after the empty strings.
    for (const i of [0, 41, 98]) expect(dot(vectors[i]!, await embedder.embedQuery(texts[i]!))).toBeCloseTo(1, 4);
  });

  it('stops at an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(embedder.embedDocuments(['x'], controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('refuses a dimension the model does not produce', () => {
    expect(() => createEmbedder({ ...config, embedding: { ...config.embedding, dimension: 768 } })).toThrow(EmbeddingError);
  });
});

describe('openai embedder against the local OpenAI-compatible server', () => {
  let server: OpenAiTestServer;
  const configFor = (embedding: Partial<EmbeddingConfig['embedding']>, baseUrl = server.url): EmbeddingConfig => ({
    openai: { baseUrl, apiKey: 'sk-test' },
    embedding: { provider: 'openai', model: 'text-embedding-3-small', dimension: 256, batchSize: 4, ...embedding },
  });

  beforeAll(async () => {
    server = await startOpenAiTestServer();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  it('returns unit vectors of the configured dimension, batched by batchSize', async () => {
    const embedder = createEmbedder(configFor({}));
    expect(embedder).toMatchObject({ provider: 'openai', model: 'text-embedding-3-small', dimension: 256 });
    const texts = Array.from({ length: 10 }, (_, i) => `document number ${i} about rivers and lakes`);
    const vectors = await embedder.embedDocuments(texts);
    expect(vectors).toHaveLength(10);
    for (const v of vectors) {
      expect(v).toHaveLength(256);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    const calls = server.requests.filter((r) => r.path === '/v1/embeddings');
    expect(calls.map((r) => r.body.input.length).sort()).toEqual([2, 4, 4]);
    for (const call of calls) {
      expect(call.headers.authorization).toBe('Bearer sk-test');
      // text-embedding-3 takes `dimensions`; the client's default wire format is base64, decoded by the client.
      expect(call.body).toMatchObject({ model: 'text-embedding-3-small', dimensions: 256, encoding_format: 'base64' });
    }
    // Order kept across batches.
    expect(dot(vectors[7]!, await embedder.embedQuery(texts[7]!))).toBeCloseTo(1, 5);
  });

  it('gets similar vectors for texts sharing words (the stand-in is a bag of words)', async () => {
    const embedder = createEmbedder(configFor({}));
    const [a, b, c] = await embedder.embedDocuments(['red apples and green pears', 'green pears, red apples', 'tax return deadline']);
    expect(dot(a!, b!)).toBeGreaterThan(0.8);
    expect(dot(a!, c!)).toBeLessThan(0.5);
  });

  it('sends no `dimensions` to models that do not take it', async () => {
    const other = await startOpenAiTestServer({ embeddingDimension: 768 });
    try {
      const embedder = createEmbedder(configFor({ model: 'nomic-embed-text', dimension: 768 }, other.url));
      expect(await embedder.embedQuery('hello')).toHaveLength(768);
      expect(other.requests[0]!.body.dimensions).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('reads float answers to a base64 request (servers that ignore encoding_format)', async () => {
    const other = await startOpenAiTestServer({ embeddingDimension: 384, ignoreEncodingFormat: true });
    try {
      const embedder = createEmbedder(configFor({ model: 'all-minilm', dimension: 384 }, other.url));
      const [v] = await embedder.embedDocuments(['hello world']);
      expect(v).toHaveLength(384);
      expect(norm(v!)).toBeCloseTo(1, 5);
    } finally {
      await other.close();
    }
  });

  it('throws EmbeddingError when the vectors do not have EMBEDDING_DIMENSION dimensions', async () => {
    const embedder = createEmbedder(configFor({ model: 'nomic-embed-text', dimension: 1024 }));
    const err = await embedder.embedDocuments(['hello']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddingError);
    expect((err as Error).message).toBe('The embeddings endpoint returned vectors of 1536 dimensions; EMBEDDING_DIMENSION is 1024');
  });

  it('turns a 401 into a readable EmbeddingError, without retrying', async () => {
    server.failNext('/v1/embeddings', 401);
    const embedder = createEmbedder(configFor({}));
    const err = await embedder.embedQuery('hello').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddingError);
    expect(err).toMatchObject({ status: 401, message: 'The embeddings endpoint answered 401: Incorrect API key provided.' });
    expect(server.requests).toHaveLength(1);
  });

  it('checks the API key like the real API when the server is given one', async () => {
    const guarded = await startOpenAiTestServer({ apiKey: 'sk-right' });
    try {
      const err = await createEmbedder(configFor({}, guarded.url)).embedQuery('hello').catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'EmbeddingError', status: 401 });
    } finally {
      await guarded.close();
    }
  });

  it('retries a 500 once the endpoint recovers', async () => {
    server.failNext('/embeddings', 500);
    const vector = await createEmbedder(configFor({})).embedQuery('hello');
    expect(vector).toHaveLength(256);
    expect(server.requests).toHaveLength(2);
  });

  it('abandons an in-flight request when the signal aborts', async () => {
    server.setDelay('/v1/embeddings', 3000);
    try {
      const controller = new AbortController();
      const started = Date.now();
      const pending = createEmbedder(configFor({})).embedDocuments(['slow'], controller.signal);
      setTimeout(() => controller.abort(), 100);
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      expect(Date.now() - started).toBeLessThan(1500);
      // Aborted, not retried.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(server.requests).toHaveLength(1);
    } finally {
      server.setDelay('/v1/embeddings', 0);
    }
  });
});

describe('the test server speaks the chat protocol of the real client', () => {
  let server: OpenAiTestServer;
  const chat = (fields: ConstructorParameters<typeof ChatOpenAI>[0] = {}) =>
    new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'sk-test', configuration: { baseURL: server.url }, maxRetries: 0, ...fields });

  beforeAll(async () => {
    server = await startOpenAiTestServer();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
    server.setChatReply((body) => `You asked: ${body.messages.at(-1).content}`);
    server.setStreamTiming({});
  });

  it('answers invoke with the reply, and records the sampling parameters', async () => {
    const model = chat({ temperature: 0.3, maxTokens: 64, topP: 0.9, presencePenalty: 0.1, frequencyPenalty: 0.2 });
    const message = await model.invoke('What is the capital of France?');
    expect(message.content).toBe('You asked: What is the capital of France?');
    expect(message.usage_metadata).toMatchObject({ output_tokens: 8 });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(server.requests[0]!.body).toMatchObject({
      model: 'gpt-4o-mini',
      temperature: 0.3,
      max_tokens: 64,
      top_p: 0.9,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
    });
  });

  it('streams the reply in several chunks that add up to it, with usage at the end', async () => {
    server.setChatReply(() => 'Paris is the capital and largest city of France.');
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await chat().stream('Capital of France?')) chunks.push(chunk);
    const texts = chunks.map((c) => c.content).filter((c) => c !== '');
    expect(texts.length).toBeGreaterThanOrEqual(5);
    expect(texts.join('')).toBe('Paris is the capital and largest city of France.');
    const usage = chunks.find((c) => c.usage_metadata)?.usage_metadata;
    expect(usage).toMatchObject({ output_tokens: 9 });
    expect(server.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('cuts the reply at max_tokens with finish_reason "length"', async () => {
    server.setChatReply(() => 'one two three four five six');
    const message = await chat({ maxTokens: 3 }).invoke('count');
    expect(message.content).toBe('one two three');
    expect(message.response_metadata.finish_reason).toBe('length');
  });

  it('notices a client that goes away mid-stream', async () => {
    server.setChatReply(() => 'a b c d e f g h i j k l m n o p');
    server.setStreamTiming({ firstTokenDelayMs: 20, tokenDelayMs: 50 });
    const controller = new AbortController();
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of await chat().stream('letters', { signal: controller.signal })) {
          if (chunk.content) seen.push(String(chunk.content));
          if (seen.length === 2) controller.abort();
        }
      })(),
    ).rejects.toThrow();
    await server.whenAborted(1);
    expect(server.aborted()).toBe(1);
    expect(seen.length).toBeLessThan(16);
  });

  it('transcribes multipart uploads and lists models', async () => {
    server.setTranscription('hello from the recording');
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('file', new Blob([new Uint8Array(1234)], { type: 'audio/mpeg' }), 'clip.mp3');
    const res = await fetch(`${server.url}/audio/transcriptions`, { method: 'POST', body: form, headers: { authorization: 'Bearer sk-test' } });
    expect(await res.json()).toEqual({ text: 'hello from the recording' });
    expect(server.requests.at(-1)!.body).toEqual({
      fields: { model: 'whisper-1' },
      files: [{ field: 'file', filename: 'clip.mp3', contentType: 'audio/mpeg', size: 1234 }],
    });

    const models = (await (await fetch(`${server.url}/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toContain('text-embedding-3-small');
  });
});
