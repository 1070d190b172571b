/**
 * Speech to text through an OpenAI-compatible `POST {baseUrl}/audio/transcriptions`
 * (multipart: `file`, `model`, `response_format=json`), as OpenAI, vLLM, LocalAI or a
 * whisper.cpp server offer it. No npm or Debian package ships a working speech model, so
 * without an endpoint there is no transcript, and nothing here pretends otherwise.
 */
import { logEndpointFailure } from './endpoint-log.ts';
import type { Logger } from '../logger.ts';

export interface TranscriptionEndpoint {
  baseUrl: string;
  apiKey: string;
}

export class TranscriptionError extends Error {
  override name = 'TranscriptionError';
}

const TIMEOUT_MS = 300_000;

export async function transcribe(
  endpoint: TranscriptionEndpoint,
  model: string,
  audio: { data: Uint8Array; fileName: string; mimeType: string },
  signal?: AbortSignal,
  logger?: Logger,
): Promise<string> {
  const started = performance.now();
  /** The endpoint failed (not the caller leaving): logged with what an operator needs. */
  const failed = (message: string, status: number | null) => {
    logEndpointFailure(logger, { endpoint: 'transcription', model, status, started, message });
    return new TranscriptionError(message);
  };
  const form = new FormData();
  // The endpoint tells the format by the file name's extension, as OpenAI's does.
  form.append('file', new Blob([audio.data], { type: audio.mimeType }), audio.fileName);
  form.append('model', model);
  form.append('response_format', 'json');
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(`${endpoint.baseUrl}/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${endpoint.apiKey}` },
      body: form,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw failed(`The speech endpoint failed: ${error instanceof Error ? error.message : String(error)}`, null);
  }
  const body = await res.text();
  if (!res.ok) {
    let detail = body.slice(0, 300);
    try {
      detail = (JSON.parse(body) as { error?: { message?: string } }).error?.message ?? detail;
    } catch {
      // not JSON: the raw start of the body
    }
    throw failed(`The speech endpoint answered ${res.status}: ${detail}`, res.status);
  }
  try {
    const text = (JSON.parse(body) as { text?: unknown }).text;
    if (typeof text === 'string') return text.trim();
  } catch {
    // Some servers answer plain text whatever was asked.
    if (!res.headers.get('content-type')?.includes('json')) return body.trim();
  }
  throw failed('The speech endpoint answered without a transcript.', res.status);
}
