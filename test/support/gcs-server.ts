/**
 * A small fake of Google Cloud Storage for tests: just enough of the JSON API for the real
 * @google-cloud/storage client (pointed at it with `apiEndpoint`), plus the XML-API PUT that a
 * v4 signed URL targets, with the signature checked against the fake service account's key.
 * It is the only stand-in the storage tests use.
 */
import { createHash, generateKeyPairSync, randomUUID, verify, type KeyObject } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeGcsObject {
  data: Buffer;
  contentType: string;
}

export interface GcsTestServer {
  url: string;
  bucket: string;
  objects: Map<string, FakeGcsObject>;
  /** A service account whose public key the server checks signed URLs against. */
  credentials: { client_email: string; private_key: string };
  /** Moves the server's clock (for signed-URL expiry) without waiting. */
  advanceTime(ms: number): void;
  close(): Promise<void>;
}

// ---- CRC32C (Castagnoli), as GCS reports it: base64 of the big-endian 32-bit value ----

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = CRC32C_TABLE[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export function crc32cBase64(data: Uint8Array): string {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32c(data));
  return out.toString('base64');
}

// ---- v4 signing pieces, mirroring what the client signs ----

/** Like the client's encoder: everything but A-Z a-z 0-9 - . _ ~ is percent-encoded. */
function strictEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function parseQuery(raw: string): Array<[string, string]> {
  if (!raw) return [];
  return raw.split('&').filter(Boolean).map((pair) => {
    const i = pair.indexOf('=');
    const k = i < 0 ? pair : pair.slice(0, i);
    const v = i < 0 ? '' : pair.slice(i + 1);
    const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, '%20'));
    return [dec(k), dec(v)];
  });
}

function parseGoogDate(value: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, s);
}

// ---- the server ----

interface Generation {
  generation: number;
  created: string;
}

interface ResumableSession {
  name: string;
  contentType: string;
  chunks: Buffer[];
  received: number;
}

export async function startGcsTestServer(): Promise<GcsTestServer> {
  const bucket = 'test-bucket';
  const objects = new Map<string, FakeGcsObject>();
  const generations = new Map<string, Generation>();
  const sessions = new Map<string, ResumableSession>();
  let clockOffset = 0;
  let nextGeneration = Date.now() * 1000;
  const now = () => Date.now() + clockOffset;

  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const credentials = {
    client_email: 'storage-tests@fake-project.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };

  let baseUrl = '';

  const store = (name: string, data: Buffer, contentType: string) => {
    objects.set(name, { data, contentType });
    generations.set(name, { generation: ++nextGeneration, created: new Date(now()).toISOString() });
  };

  const resource = (name: string) => {
    const obj = objects.get(name)!;
    const gen = generations.get(name) ?? { generation: 1, created: new Date(0).toISOString() };
    const md5 = createHash('md5').update(obj.data).digest();
    return {
      kind: 'storage#object',
      id: `${bucket}/${name}/${gen.generation}`,
      selfLink: `${baseUrl}/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}`,
      mediaLink: `${baseUrl}/download/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}?generation=${gen.generation}&alt=media`,
      name,
      bucket,
      generation: String(gen.generation),
      metageneration: '1',
      contentType: obj.contentType,
      storageClass: 'STANDARD',
      size: String(obj.data.length),
      md5Hash: md5.toString('base64'),
      crc32c: crc32cBase64(obj.data),
      etag: `C${gen.generation}`,
      timeCreated: gen.created,
      updated: gen.created,
    };
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) jsonError(res, 500, 'internalError', err instanceof Error ? err.message : String(err));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const rawQuery = q < 0 ? '' : rawUrl.slice(q + 1);
    const query = new Map(parseQuery(rawQuery));
    const method = req.method ?? 'GET';

    // JSON API: uploads
    let m = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(rawPath);
    if (m) {
      if (decodeURIComponent(m[1]!) !== bucket) return noBucket(res);
      const body = await readBody(req);
      const uploadType = query.get('uploadType');
      if (method === 'POST' && uploadType === 'media') {
        const name = query.get('name');
        if (!name) return jsonError(res, 400, 'required', 'Required parameter: name');
        store(name, body, String(req.headers['content-type'] ?? 'application/octet-stream'));
        return json(res, 200, resource(name));
      }
      if (method === 'POST' && uploadType === 'multipart') {
        const parts = parseMultipart(body, String(req.headers['content-type'] ?? ''));
        if (!parts || parts.length < 2) return jsonError(res, 400, 'invalid', 'Malformed multipart body');
        const meta = JSON.parse(parts[0]!.body.toString('utf8')) as { name?: string; contentType?: string };
        const name = meta.name ?? query.get('name');
        if (!name) return jsonError(res, 400, 'required', 'Required parameter: name');
        const contentType = meta.contentType ?? parts[1]!.headers['content-type'] ?? 'application/octet-stream';
        store(name, parts[1]!.body, contentType);
        return json(res, 200, resource(name));
      }
      if (method === 'POST' && uploadType === 'resumable') {
        const meta = body.length ? (JSON.parse(body.toString('utf8')) as { name?: string; contentType?: string }) : {};
        const name = meta.name ?? query.get('name');
        if (!name) return jsonError(res, 400, 'required', 'Required parameter: name');
        const id = randomUUID();
        const contentType = meta.contentType ?? String(req.headers['x-upload-content-type'] ?? 'application/octet-stream');
        sessions.set(id, { name, contentType, chunks: [], received: 0 });
        res.writeHead(200, { location: `${baseUrl}/upload/storage/v1/b/${bucket}/o?uploadType=resumable&upload_id=${id}` });
        return void res.end();
      }
      if (method === 'PUT' && uploadType === 'resumable') {
        const session = sessions.get(query.get('upload_id') ?? '');
        if (!session) return jsonError(res, 404, 'notFound', 'No such upload session');
        const range = /^bytes (\*|(\d+)-(\d+))\/(\*|\d+)$/.exec(String(req.headers['content-range'] ?? `bytes */${body.length}`));
        if (body.length) {
          session.chunks.push(body);
          session.received += body.length;
        }
        const total = range && range[4] !== '*' ? Number(range[4]) : null;
        if (total !== null && session.received >= total) {
          sessions.delete(query.get('upload_id')!);
          store(session.name, Buffer.concat(session.chunks), session.contentType);
          return json(res, 200, resource(session.name));
        }
        res.writeHead(308, session.received ? { range: `bytes=0-${session.received - 1}` } : {});
        return void res.end();
      }
      return jsonError(res, 400, 'invalid', `Unsupported upload: ${method} uploadType=${uploadType}`);
    }

    // JSON API: metadata, download, delete
    m = /^\/(?:download\/)?storage\/v1\/b\/([^/]+)\/o\/(.+)$/.exec(rawPath);
    if (m) {
      if (decodeURIComponent(m[1]!) !== bucket) return noBucket(res);
      await readBody(req);
      const name = decodeURIComponent(m[2]!);
      if (!objects.has(name)) return jsonError(res, 404, 'notFound', `No such object: ${bucket}/${name}`);
      if (method === 'DELETE') {
        objects.delete(name);
        generations.delete(name);
        res.writeHead(204);
        return void res.end();
      }
      if (method === 'GET' && query.get('alt') === 'media') {
        const obj = objects.get(name)!;
        const meta = resource(name);
        res.writeHead(200, {
          'content-type': obj.contentType,
          'content-length': obj.data.length,
          'x-goog-hash': `crc32c=${meta.crc32c},md5=${meta.md5Hash}`,
          'x-goog-stored-content-encoding': 'identity',
          'x-goog-generation': meta.generation,
        });
        return void res.end(obj.data);
      }
      if (method === 'GET') return json(res, 200, resource(name));
      return jsonError(res, 405, 'methodNotAllowed', `${method} not supported here`);
    }

    // XML API, as targeted by v4 signed URLs: /<bucket>/<object>?X-Goog-...
    m = /^\/([^/]+)\/(.+)$/.exec(rawPath);
    if (m) {
      if (decodeURIComponent(m[1]!) !== bucket) return xmlError(res, 404, 'NoSuchBucket', 'The specified bucket does not exist.');
      const name = decodeURIComponent(m[2]!);
      const body = await readBody(req);
      const denied = checkSignedRequest(method, rawPath, rawQuery, query, req);
      if (denied) return xmlError(res, denied.status, denied.code, denied.message);
      if (method !== 'PUT') return xmlError(res, 405, 'MethodNotAllowed', 'Only PUT is faked.');

      const range = req.headers['x-goog-content-length-range'];
      if (typeof range === 'string') {
        const [min, max] = range.split(',').map((s) => Number(s.trim()));
        if (body.length < (min ?? 0) || body.length > (max ?? Infinity)) {
          return xmlError(res, 400, 'EntityTooLarge', 'Your proposed upload is larger than the maximum object size specified in your Policy Document.');
        }
      }
      const ifGen = req.headers['x-goog-if-generation-match'];
      if (ifGen !== undefined) {
        const current = objects.has(name) ? String(generations.get(name)?.generation ?? 1) : '0';
        if (String(ifGen) !== current) return xmlError(res, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold.');
      }
      store(name, body, String(req.headers['content-type'] ?? 'application/octet-stream'));
      const meta = resource(name);
      res.writeHead(200, {
        etag: `"${createHash('md5').update(body).digest('hex')}"`,
        'x-goog-generation': meta.generation,
        'x-goog-hash': `crc32c=${meta.crc32c},md5=${meta.md5Hash}`,
      });
      return void res.end();
    }

    await readBody(req);
    jsonError(res, 404, 'notFound', `Not faked: ${method} ${rawPath}`);
  }

  /**
   * Rebuilds the v4 canonical request from what actually arrived and checks the RSA-SHA256
   * signature with the service account's public key, as GCS does. One deliberate difference:
   * the client signs `host` as the endpoint's hostname without the port, and real GCS never
   * sees a port, so the port of the Host header is dropped here.
   */
  function checkSignedRequest(
    method: string,
    rawPath: string,
    rawQuery: string,
    query: Map<string, string>,
    req: IncomingMessage,
  ): { status: number; code: string; message: string } | null {
    if (!query.has('X-Goog-Signature')) {
      return { status: 403, code: 'AccessDenied', message: 'Anonymous caller does not have storage.objects.create access.' };
    }
    const need = ['X-Goog-Algorithm', 'X-Goog-Credential', 'X-Goog-Date', 'X-Goog-Expires', 'X-Goog-SignedHeaders', 'X-Goog-Signature'];
    for (const name of need) {
      if (!query.get(name)) return { status: 400, code: 'AuthenticationRequired', message: `Missing ${name}.` };
    }
    if (query.get('X-Goog-Algorithm') !== 'GOOG4-RSA-SHA256') {
      return { status: 400, code: 'InvalidArgument', message: 'Unsupported X-Goog-Algorithm.' };
    }
    const signedAt = parseGoogDate(query.get('X-Goog-Date')!);
    const expiresIn = Number(query.get('X-Goog-Expires'));
    if (signedAt === null || !Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > 604800) {
      return { status: 400, code: 'InvalidArgument', message: 'Invalid X-Goog-Date or X-Goog-Expires.' };
    }
    if (now() >= signedAt + expiresIn * 1000) {
      return { status: 400, code: 'ExpiredToken', message: 'Invalid argument: the signed URL has expired.' };
    }
    const credential = query.get('X-Goog-Credential')!;
    const slash = credential.indexOf('/');
    const email = credential.slice(0, slash);
    const scope = credential.slice(slash + 1);
    if (email !== credentials.client_email) {
      return { status: 403, code: 'AccessDenied', message: 'Unknown service account.' };
    }

    const canonicalQuery = parseQuery(rawQuery)
      .filter(([k]) => k !== 'X-Goog-Signature')
      .map(([k, v]) => [strictEncode(k), strictEncode(v)] as const)
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join('&');
    const signedHeaders = query.get('X-Goog-SignedHeaders')!;
    let canonicalHeaders = '';
    for (const name of signedHeaders.split(';')) {
      let value = name === 'host' ? String(req.headers.host ?? '').replace(/:\d+$/, '') : req.headers[name];
      if (Array.isArray(value)) value = value.join(',');
      if (value === undefined) {
        return { status: 403, code: 'SignatureDoesNotMatch', message: `The signed header ${name} is missing from the request.` };
      }
      canonicalHeaders += `${name}:${value.trim().replace(/\s{2,}/g, ' ')}\n`;
    }
    const payloadHash = signedHeaders.split(';').includes('x-goog-content-sha256')
      ? String(req.headers['x-goog-content-sha256'])
      : 'UNSIGNED-PAYLOAD';
    const canonicalRequest = [method, rawPath, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n');
    const stringToSign = [
      'GOOG4-RSA-SHA256',
      query.get('X-Goog-Date')!,
      scope,
      createHash('sha256').update(canonicalRequest).digest('hex'),
    ].join('\n');
    const signature = query.get('X-Goog-Signature')!;
    if (!/^[0-9a-f]+$/i.test(signature) || !verifySignature(publicKey, stringToSign, Buffer.from(signature, 'hex'))) {
      return {
        status: 403,
        code: 'SignatureDoesNotMatch',
        message: 'The request signature we calculated does not match the signature you provided.',
      };
    }
    return null;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: baseUrl,
    bucket,
    objects,
    credentials,
    advanceTime(ms: number) {
      clockOffset += ms;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function verifySignature(key: KeyObject, data: string, signature: Buffer): boolean {
  try {
    return verify('RSA-SHA256', Buffer.from(data, 'utf8'), key, signature);
  } catch {
    return false;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** multipart/related as the client sends it: a JSON metadata part, then the media part. */
function parseMultipart(body: Buffer, contentType: string): Array<{ headers: Record<string, string>; body: Buffer }> | null {
  const m = /boundary="?([^";]+)"?/i.exec(contentType);
  if (!m) return null;
  const delimiter = Buffer.from(`--${m[1]}`);
  const parts: Array<{ headers: Record<string, string>; body: Buffer }> = [];
  let pos = body.indexOf(delimiter);
  while (pos >= 0) {
    let start = pos + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    if (body.subarray(start, start + 2).toString() === '\r\n') start += 2;
    const next = body.indexOf(delimiter, start);
    if (next < 0) return null;
    let end = next;
    if (body.subarray(end - 2, end).toString() === '\r\n') end -= 2;
    const part = body.subarray(start, end);
    const split = part.indexOf('\r\n\r\n');
    const headerText = split < 0 ? '' : part.subarray(0, split).toString('utf8');
    const headers: Record<string, string> = {};
    for (const line of headerText.split('\r\n')) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    parts.push({ headers, body: split < 0 ? part : part.subarray(split + 4) });
    pos = next;
  }
  return parts;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function jsonError(res: ServerResponse, status: number, reason: string, message: string): void {
  json(res, status, { error: { code: status, message, errors: [{ message, domain: 'global', reason }] } });
}

function noBucket(res: ServerResponse): void {
  jsonError(res, 404, 'notFound', 'The specified bucket does not exist.');
}

function xmlError(res: ServerResponse, status: number, code: string, message: string): void {
  const text = `<?xml version='1.0' encoding='UTF-8'?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  res.writeHead(status, { 'content-type': 'application/xml; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
