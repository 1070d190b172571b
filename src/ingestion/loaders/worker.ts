/**
 * Worker entry of `loadDocument`: parses one document and posts the result. It runs in its
 * own thread so that a parser's memory or CPU blow-up can be cut off without harm to the
 * server (see index.ts). Kept minimal: everything testable lives in the parse functions.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { LoaderError } from './errors.ts';
import { formatOf, parseDocument } from './parse.ts';
import type { WorkerJob, WorkerReply } from './protocol.ts';

const job = workerData as WorkerJob;
const reply = (message: WorkerReply) => parentPort!.postMessage(message);

function failure(error: unknown): WorkerReply {
  if (error instanceof LoaderError) {
    return { ok: false, code: error.code, message: error.message, detail: describe(error.cause) };
  }
  return { ok: false, message: 'Document parsing failed.', detail: describe(error) };
}

/** For logs: name, message and stack (pdf.js errors leave the message out of their stack). */
function describe(error: unknown): string | undefined {
  if (error === undefined) return undefined;
  if (!(error instanceof Error)) return String(error);
  const head = `${error.name}: ${error.message}`;
  return error.stack?.includes(error.message) ? error.stack : `${head}\n${error.stack ?? ''}`;
}

// Some libraries throw from callbacks outside any promise chain; that is still bad input.
const corruptMessage = formatOf(job.mimeType)?.corrupt ?? 'The document could not be read.';
const crash = (error: unknown) => {
  reply({ ok: false, code: 'CORRUPT', message: corruptMessage, detail: describe(error) });
  process.exit(1);
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

try {
  const data = Buffer.from(job.data.buffer, job.data.byteOffset, job.data.byteLength);
  reply({ ok: true, doc: await parseDocument(data, job.mimeType, { maxTextChars: job.maxTextChars }) });
} catch (error) {
  reply(failure(error));
}
