/**
 * An optional reranker: any endpoint of the widely served `/rerank` shape (Cohere, Jina, and
 * servers compatible with them): `{model, query, documents, top_n}` answered by
 * `{results: [{index, relevance_score}]}`. It reorders the candidates of a search; it does not
 * change their `score` (which stays comparable across queries and with or without a reranker).
 */
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { logEndpointFailure } from './endpoint-log.ts';

export interface Reranker {
  /** Indexes into `documents`, best first, at most `topN`. Throws RerankError. */
  rerank(query: string, documents: string[], topN: number, signal?: AbortSignal): Promise<number[]>;
}

export class RerankError extends Error {
  override name = 'RerankError';
}

const TIMEOUT_MS = 15_000;

/** Failures are logged as the other model endpoints' are (one line an operator can alert on). */
export function createReranker(config: Pick<Config, 'rerank'>, logger?: Logger): Reranker | null {
  const settings = config.rerank;
  if (!settings) return null;
  const model = settings.model ?? '(endpoint default)';
  return {
    async rerank(query, documents, topN, signal) {
      if (!documents.length) return [];
      const started = performance.now();
      const fail = (status: number | null, message: string, cause?: unknown): never => {
        logEndpointFailure(logger, { endpoint: 'rerank', model, status, started, message });
        throw new RerankError(message, { cause });
      };
      const timeout = AbortSignal.timeout(TIMEOUT_MS);
      let res: Response;
      try {
        res = await fetch(settings.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
          body: JSON.stringify({ ...(settings.model ? { model: settings.model } : {}), query, documents, top_n: Math.min(topN, documents.length) }),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (err) {
        signal?.throwIfAborted();
        return fail(null, `The rerank endpoint could not be reached: ${err instanceof Error ? err.message : String(err)}`, err);
      }
      if (!res.ok) return fail(res.status, `The rerank endpoint answered ${res.status}.`);
      const body = (await res.json().catch(() => null)) as { results?: unknown } | null;
      if (!Array.isArray(body?.results)) return fail(res.status, 'The rerank endpoint answered without a results array.');
      const seen = new Set<number>();
      const ranked: { index: number; score: number }[] = [];
      for (const r of body.results as { index?: unknown; relevance_score?: unknown }[]) {
        const index = r?.index;
        const score = r?.relevance_score;
        if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= documents.length || typeof score !== 'number' || seen.has(index as number)) {
          return fail(res.status, 'The rerank endpoint answered a result that does not name one of the documents sent.');
        }
        seen.add(index as number);
        ranked.push({ index: index as number, score });
      }
      // Servers return results best first, but the scores are what the protocol promises.
      return ranked
        .sort((a, b) => b.score - a.score)
        .slice(0, topN)
        .map((r) => r.index);
    },
  };
}
