/**
 * `npm run eval` measures another embedding model when one is configured as for the service
 * (EMBEDDING_MODEL with OPENAI_BASE_URL): its output names the model, the endpoint serves every
 * embedding, and the answers stay the extractive answerer's (no chat call), which is what its
 * answer figures measure. The endpoint is the local stand-in speaking OpenAI's protocol.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/app.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { runScript } from './support/process.ts';

let server: OpenAiTestServer;
let dir: string;
let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  server = await startOpenAiTestServer();
  database = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'agentbase-eval-set-'));
  mkdirSync(path.join(dir, 'corpus'));
  writeFileSync(
    path.join(dir, 'corpus', 'brindle-toaster.md'),
    '# Brindle T2 Toaster: Quick Guide\n\n## Settings\n\nThe Brindle T2 has seven browning levels. Level 4 suits most bread.\n\n## Cleaning\n\nEmpty the crumb tray once a week. Unplug the toaster before cleaning it.\n',
  );
  writeFileSync(
    path.join(dir, 'questions.tsv'),
    'brindle-toaster\tHow many browning levels does the Brindle T2 have?\tseven browning levels\nbrindle-toaster\tHow often should I empty the crumb tray of the Brindle T2?\tonce a week\n-\tWhat is the capital of France?\t\n',
  );
});

afterAll(async () => {
  await server?.close();
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('npm run eval with an embeddings endpoint', () => {
  it("measures the endpoint's model, names it, and still answers with the extractive answerer", async () => {
    const { code, stdout, stderr } = await runScript(
      'eval',
      ['--set', dir],
      { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: '', EMBEDDING_MODEL: 'text-embedding-3-small', EMBEDDING_DIMENSION: '256', DATABASE_URL: database.url, LOG_LEVEL: 'silent' },
      150_000,
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('evaluation set: 1 documents, 3 questions (1 unanswerable)');
    expect(stdout).toContain(`embeddings: openai text-embedding-3-small at ${server.url}, 256 dimensions; rerank: none; answers: the extractive answerer`);
    expect(stdout).toMatch(/\n\s+hybrid\s+100\.0%\s+100\.0%/);
    // The extractive answerer quotes each answer and refuses the question about France.
    expect(stdout).toContain('answers, all: hit 100.0%');
    expect(stdout).toContain('unanswerable -> "nothing found" 100.0% (1 of 1), answerable -> "nothing found" 0.0% (0 of 2)');
    const embeddings = server.requests.filter((r) => r.path.endsWith('/embeddings'));
    // The chunks at ingestion, then the questions and the answerer's sentences.
    expect(embeddings.length).toBeGreaterThanOrEqual(2);
    expect(embeddings.every((r) => r.body.model === 'text-embedding-3-small' && r.body.dimensions === 256)).toBe(true);
    expect(server.requests.filter((r) => r.path.endsWith('/chat/completions'))).toEqual([]);
  }, 180_000);
});
