/**
 * Document loaders: bytes of an uploaded file to plain text for ingestion.
 *
 * Parsing untrusted Office/PDF files is where memory and CPU blow up, so it never happens on
 * the caller's thread: each document is parsed in a fresh worker thread with a V8 heap limit
 * and a deadline, and terminated past either. A fresh worker per document (rather than a
 * pool) costs ~40 ms compiled (~350 ms under the TypeScript hook in development), which
 * ingestion does not notice, and guarantees that nothing from one document's parse (heap
 * growth, pdf.js state, a library's leftovers) outlives it. Cheap checks
 * that need no parsing (type, magic bytes, the ZIP directory) run here first, so refusals are
 * immediate.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { LoaderError } from './errors.ts';
import { isOoxml, isSupportedMimeType, labelOf, magic, MIME, normalizeMimeType } from './mime.ts';
import { tooMuchText } from './common.ts';
import { formatOf, parseDocument } from './parse.ts';
import type { WorkerJob, WorkerReply } from './protocol.ts';
import type { LoadedDocument } from './types.ts';
import { inspectZip } from './zip-guard.ts';
import { Slots } from '../../slots.ts';

export { DATASOURCE_MIME_TYPES, EXTRA_MIME_TYPES, extensionFor, mimeTypeFromFileName, normalizeMimeType } from './mime.ts';
export { LoaderError, type LoaderErrorCode } from './errors.ts';
export type { LoadedDocument, LoadedPage } from './types.ts';

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_MEMORY_MB = 512;
const DEFAULT_MAX_TEXT_CHARS = 5_000_000;

interface LoadOptions {
  /** Deadline counted from the worker's start: time queued behind other documents is free. */
  timeoutMs?: number;
  /** V8 heap limit of the parsing worker (`maxOldGenerationSizeMb`). */
  maxMemoryMb?: number;
  maxTextChars?: number;
}

// Under `npm start` and vitest this module is TypeScript, and so is the worker: a worker is a
// plain Node thread that only understands TypeScript through the same loader hook. After
// `tsc` both are .js and need nothing.
const WORKER_IS_TS = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(WORKER_IS_TS ? './worker.ts' : './worker.js', import.meta.url);
const SWC_REGISTER = '@swc-node/register/esm-register';

let swcPinned = false;

/**
 * The TypeScript hook's compiler is a napi-rs addon, and such an addon crashes the whole
 * process (SIGSEGV, seen under vitest after three workers) when it is loaded only by worker
 * threads that come and go. Loading it once on this thread keeps it alive for the process.
 * Under `npm start` the hook already loaded it here; under vitest nothing had.
 */
function pinTypeScriptCompiler(): void {
  if (swcPinned) return;
  swcPinned = true;
  try {
    createRequire(import.meta.url)('@swc/core');
  } catch {
    // Not installed here: then the worker's hook fails to start and says so.
  }
}

function workerExecArgv(): string[] | undefined {
  if (!WORKER_IS_TS) return undefined; // inherit the parent's flags
  pinTypeScriptCompiler();
  let register = SWC_REGISTER;
  try {
    // Resolved from this file, so the worker starts whatever the process's working directory.
    register = import.meta.resolve(SWC_REGISTER);
  } catch {
    // Left bare: resolved from the working directory, which is the project under npm scripts.
  }
  return ['--import', register];
}

/**
 * Parsing workers running at once. Each may use `maxMemoryMb` of heap plus its file's
 * buffers, so an upload burst must queue rather than start a worker per file.
 */
const MAX_CONCURRENT_WORKERS = Math.max(1, Math.min(4, availableParallelism()));
const slots = new Slots(MAX_CONCURRENT_WORKERS);

const MB = 1024 * 1024;
const TEXT_TYPES: ReadonlySet<string> = new Set([MIME.text, MIME.markdown, MIME.csv, MIME.json]);
/**
 * The worker's heap limit stops runaway JavaScript, but not one allocation made inside a
 * builtin (decoding a file into a string, say): past the limit that aborts the process. So
 * inputs are kept well below the heap: a text file's string takes up to 2 bytes per byte,
 * and line-ending normalisation briefly holds a second copy; an Office file's parts are read
 * as strings of their uncompressed size.
 */
const TEXT_HEAP_BYTES_PER_INPUT_BYTE = 4;
const ZIP_HEAP_BYTES_PER_UNCOMPRESSED_BYTE = 2;
/** UTF-8 needs at most 4 bytes per character, so more bytes than this surely exceed the cap. */
const MAX_UTF8_BYTES_PER_CHAR = 4;

/**
 * Read on the caller's thread: decoding text runs no parsing library, takes time linear in a size
 * the precheck has already bounded, and cannot blow up. A worker's start costs far more than the
 * read (~1 s of CPU per document under the TypeScript hook, which `npm start` uses), and was
 * most of the CPU an upload of text files cost (docs/benchmarks.md, bench:ingest).
 */
const INLINE_TYPES: ReadonlySet<string> = new Set([MIME.text, MIME.markdown]);

function tooLarge(): LoaderError {
  return new LoaderError('TOO_LARGE', 'The document is too large to read.');
}

/** Refusals that need no parser: wrong magic bytes, unsafe ZIP directories, sure overflows. */
function precheck(data: Buffer, mimeType: string, limits: Limits): void {
  const corrupt = () => new LoaderError('CORRUPT', formatOf(mimeType)!.corrupt);
  const heapBytes = limits.maxMemoryMb * MB;
  const guardZip = () => {
    const { totalUncompressedBytes } = inspectZip(data, labelOf(mimeType));
    if (totalUncompressedBytes * ZIP_HEAP_BYTES_PER_UNCOMPRESSED_BYTE > heapBytes) throw tooLarge();
  };
  if (TEXT_TYPES.has(mimeType)) {
    if (data.length * TEXT_HEAP_BYTES_PER_INPUT_BYTE > heapBytes) throw tooLarge();
    if ((mimeType === MIME.text || mimeType === MIME.markdown) && data.length > MAX_UTF8_BYTES_PER_CHAR * limits.maxTextChars + 4) {
      throw tooMuchText(limits.maxTextChars);
    }
  } else if (isOoxml(mimeType)) {
    guardZip();
  } else if (mimeType === MIME.pdf) {
    if (!magic.pdf(data)) throw corrupt();
  } else if (mimeType === MIME.doc) {
    // word-extractor also reads a .docx sent as application/msword; guard it like one.
    if (magic.zip(data)) guardZip();
    else if (!magic.ole(data)) throw corrupt();
  }
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number`);
  return value;
}

/**
 * Reads a document's text. Throws `LoaderError` for everything the file's sender can cause
 * (its `message` can be shown to them); any other error is a fault of the server.
 */
export async function loadDocument(data: Buffer, mimeType: string, opts: LoadOptions = {}): Promise<LoadedDocument> {
  const timeoutMs = positive('timeoutMs', opts.timeoutMs, DEFAULT_TIMEOUT_MS);
  const maxMemoryMb = positive('maxMemoryMb', opts.maxMemoryMb, DEFAULT_MAX_MEMORY_MB);
  const maxTextChars = positive('maxTextChars', opts.maxTextChars, DEFAULT_MAX_TEXT_CHARS);
  const type = normalizeMimeType(mimeType);
  if (!isSupportedMimeType(type)) {
    throw new LoaderError('UNSUPPORTED_TYPE', `Files of type ${type || 'unknown'} are not supported.`);
  }
  if (data.length === 0) throw new LoaderError('EMPTY', 'The file is empty.');
  const limits: Limits = { timeoutMs, maxMemoryMb, maxTextChars };
  precheck(data, type, limits);
  if (INLINE_TYPES.has(type)) return parseDocument(data, type, { maxTextChars });
  return slots.run(() => runWorker(data, type, limits));
}

interface Limits {
  timeoutMs: number;
  maxMemoryMb: number;
  maxTextChars: number;
}

function runWorker(data: Buffer, mimeType: string, limits: Limits): Promise<LoadedDocument> {
  // A copy is transferred, not the caller's buffer: transferring would detach memory the
  // caller still owns (or, for small Buffers, Node's shared pool), and one copy is what
  // structured cloning would cost anyway.
  const copy = new Uint8Array(data.byteLength);
  copy.set(data);
  const job: WorkerJob = { data: copy, mimeType, maxTextChars: limits.maxTextChars };

  return new Promise<LoadedDocument>((resolve, reject) => {
    const worker = new Worker(WORKER_URL, {
      workerData: job,
      transferList: [copy.buffer],
      execArgv: workerExecArgv(),
      resourceLimits: { maxOldGenerationSizeMb: limits.maxMemoryMb },
    });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
      // The answer is in; whatever the parser left running (timers, pdf.js) goes with the thread.
      void worker.terminate();
    };
    const timer = setTimeout(() => {
      const seconds = Math.round(limits.timeoutMs / 100) / 10;
      settle(() => reject(new LoaderError('TIMEOUT', `The document took too long to read (over ${seconds} s).`)));
    }, limits.timeoutMs);

    worker.on('message', (reply: WorkerReply) => {
      settle(() => {
        if (reply.ok) resolve(reply.doc);
        else if (reply.code) reject(new LoaderError(reply.code, reply.message, causeOf(reply.detail)));
        else reject(new Error(reply.message, causeOf(reply.detail)));
      });
    });
    worker.on('error', (error: Error & { code?: string }) => {
      settle(() => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
          reject(new LoaderError('TOO_LARGE', 'The document is too large to read: it needs too much memory.', { cause: error }));
        } else {
          reject(new Error('The document loader worker failed.', { cause: error }));
        }
      });
    });
    worker.on('exit', (code) => {
      settle(() => reject(new Error(`The document loader worker exited (code ${code}) without a result.`)));
    });
  });
}

/** The worker's error, rebuilt for logs: its stack is the worker's, not this thread's. */
function causeOf(detail: string | undefined): ErrorOptions | undefined {
  if (detail === undefined) return undefined;
  const cause = new Error(detail.split('\n', 1)[0]);
  cause.stack = detail;
  return { cause };
}
