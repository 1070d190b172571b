import type { Logger } from '../logger.ts';

export interface EndpointFailure {
  /** Which model endpoint: chat, embeddings, transcription, rerank. */
  endpoint: string;
  model: string;
  /** The HTTP status it answered; null when it did not answer. */
  status: number | null;
  /** `performance.now()` when the call started. */
  started: number;
  message: string;
}

/** A model endpoint failed (not the caller leaving): one line with what an operator needs. */
export function logEndpointFailure(logger: Logger | undefined, failure: EndpointFailure): void {
  const { started, message, ...fields } = failure;
  logger?.warn('model endpoint failed', { ...fields, latencyMs: Math.round(performance.now() - started), error: message });
}
