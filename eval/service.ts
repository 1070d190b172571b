/**
 * The service the evaluation measures (`npm run eval`, `npm run eval:replay`): a fresh one on the
 * embedded database in memory (DATABASE_URL's server when set), logging nothing unless LOG_LEVEL
 * says so. Its embeddings and reranker are configured as the service's are, so another model can be
 * measured on this set or on yours: EMBEDDING_MODEL (+ EMBEDDING_DIMENSION) with OPENAI_BASE_URL or
 * OPENAI_API_KEY, RERANK_URL (+ RERANK_MODEL, RERANK_API_KEY). Its answers are always the
 * extractive answerer's, which is what the answer figures measure, even when an endpoint is set.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { start, type Running } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';

export interface EvaluatedService {
  running: Running;
  /** What was measured, for the first line of the output: the embedding model, the reranker, the answerer. */
  label: string;
  stop(): Promise<void>;
}

export async function startEvaluatedService(env: NodeJS.ProcessEnv, overrides: Record<string, string> = {}): Promise<EvaluatedService> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agentbase-eval-'));
  try {
    const config = loadConfig({ ...env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: env.DATABASE_URL || 'pglite://memory', LOG_LEVEL: env.LOG_LEVEL ?? 'silent', ...overrides });
    const running = await start(config, { extractiveOnly: true });
    const { embedder } = running.services;
    const endpoint = embedder.provider === 'openai' ? ` at ${config.openai?.baseUrl}` : '';
    const rerank = config.rerank ? `${config.rerank.url}${config.rerank.model ? ` (${config.rerank.model})` : ''}` : 'none';
    return {
      running,
      label: `embeddings: ${embedder.provider} ${embedder.model}${endpoint}, ${embedder.dimension} dimensions; rerank: ${rerank}; answers: the extractive answerer`,
      stop: async () => {
        await running.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}
