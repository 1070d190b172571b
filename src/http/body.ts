/**
 * Request bodies, read one way for every route of the service (REST rows and /graphql): a
 * JSON reader with one set of limits and errors from the table, and the multipart reader of
 * file uploads. Every failure is an AppError; nothing a client sends escapes as a stream error.
 */
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { AppError } from '../errors.ts';

/** A file part of a multipart body. */
export interface UploadedPart {
  buffer: Buffer;
  fileName: string;
  mimeType: string;
}

/** Reads a JSON body within the limit. Throws BAD_USER_INPUT, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE. */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const length = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (!chunked && (length === undefined || length === '0')) return undefined;
  if (length !== undefined && Number(length) > limit) {
    drain(req);
    throw new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`);
  }
  const type = req.headers['content-type'] ?? '';
  const [essence, ...params] = type.split(';').map((s) => s.trim().toLowerCase());
  if (essence !== 'application/json' && !essence?.endsWith('+json')) {
    drain(req);
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.');
  }
  const charset = params.find((p) => p.startsWith('charset='))?.slice(8).replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    drain(req);
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported; send UTF-8 JSON.');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        drain(req);
        throw new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    // The client went away mid-body: its doing, not ours.
    throw new AppError('BAD_USER_INPUT', 'The request body was cut short.');
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('BAD_USER_INPUT', 'The request body is not valid JSON.');
  }
}

/**
 * Reads a multipart body: text fields, and one part named `file` of at most `fileLimit` bytes.
 * Throws BAD_USER_INPUT, PAYLOAD_TOO_LARGE.
 */
export function readMultipart(req: IncomingMessage, opts: { fileLimit: number }): Promise<{ body: Record<string, string>; file?: UploadedPart }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: opts.fileLimit, fields: 50, fieldSize: 64 * 1024, parts: 60 } });
    } catch {
      return reject(new AppError('BAD_USER_INPUT', 'The multipart body is malformed (boundary missing).'));
    }
    const body: Record<string, string> = {};
    let file: UploadedPart | undefined;
    let failure: AppError | null = null;
    const fail = (error: AppError) => {
      failure ??= error;
      req.unpipe(parser);
      drain(req);
      reject(failure);
    };
    parser.on('field', (name, value) => (body[name] = value));
    parser.on('file', (name, stream, info) => {
      if (name !== 'file') {
        stream.on('error', () => {}); // the parser's own error event answers
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      // A body cut short errors the file stream as well as the parser: both are answered as 400.
      stream.on('error', () => fail(new AppError('BAD_USER_INPUT', 'The multipart body is malformed or cut short.')));
      stream.on('data', (d: Buffer) => chunks.push(d));
      stream.on('limit', () => fail(new AppError('PAYLOAD_TOO_LARGE', `The file is larger than the limit of ${opts.fileLimit} bytes.`, { limit: opts.fileLimit })));
      stream.on('end', () => {
        if (!failure) file = { buffer: Buffer.concat(chunks), fileName: info.filename ?? 'upload', mimeType: info.mimeType ?? 'application/octet-stream' };
      });
    });
    parser.on('filesLimit', () => fail(new AppError('BAD_USER_INPUT', 'Send one file per request.')));
    parser.on('error', () => fail(new AppError('BAD_USER_INPUT', 'The multipart body is malformed or cut short.')));
    req.on('error', () => fail(new AppError('BAD_USER_INPUT', 'The request body was cut short.')));
    parser.on('close', () => {
      if (!failure) resolve({ body, file });
    });
    req.pipe(parser);
  });
}

/** Lets the client finish sending (so it reads our answer) without keeping what it sends. */
export function drain(req: IncomingMessage) {
  req.resume();
}

/**
 * The largest JSON body that carries a base64 file of the upload cap: the encoded file
 * (4 bytes per 3) and room for the other fields. A body just above the cap still reaches the
 * service, which answers 413 naming the file's size; far above, it is cut while being read.
 */
export function fileBodyLimit(uploadLimitBytes: number, jsonLimitBytes: number): number {
  return Math.ceil(uploadLimitBytes / 3) * 4 + jsonLimitBytes;
}

