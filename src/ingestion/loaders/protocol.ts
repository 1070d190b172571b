import type { LoaderErrorCode } from './errors.ts';
import type { LoadedDocument } from './types.ts';

/** Passed as `workerData`; `data` travels in the transfer list, not copied. */
export interface WorkerJob {
  data: Uint8Array;
  mimeType: string;
  maxTextChars: number;
}

/** `code` absent: the worker itself failed (a bug), not the document. */
export type WorkerReply =
  | { ok: true; doc: LoadedDocument }
  | { ok: false; code?: LoaderErrorCode; message: string; detail?: string };
