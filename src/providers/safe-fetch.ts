import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Transform } from 'node:stream';
import ipaddr from 'ipaddr.js';
import { CONTENT_CODINGS, contentDecoder } from './decompress.ts';

/**
 * An HTTP(S) GET for crawling URLs that users give us. The server must never become a proxy
 * into its own network (cloud metadata at 169.254.169.254, databases on localhost, ...), so
 * every hop's address is checked after DNS resolution and the connection goes to exactly the
 * address that was checked.
 */

export type FetchErrorCode =
  | 'BAD_URL'
  | 'PRIVATE_ADDRESS'
  | 'TIMEOUT'
  | 'TOO_LARGE'
  | 'HTTP_STATUS'
  | 'TOO_MANY_REDIRECTS'
  | 'NETWORK'
  | 'UNSUPPORTED_CONTENT';

export class FetchError extends Error {
  constructor(
    readonly code: FetchErrorCode,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

export interface SafeFetchOptions {
  /** Allow loopback, private, link-local... addresses: for tests and self-hosted intranets only. */
  allowPrivate: boolean;
  /** One deadline for the whole call: every hop's connect, headers and body. */
  timeoutMs?: number;
  /** Cap on the body, counted both as received and after decompression. */
  maxBytes?: number;
  maxRedirects?: number;
  accept?: string;
  userAgent?: string;
  /** Aborting rejects with the signal's reason, not a FetchError: the caller chose to stop. */
  signal?: AbortSignal;
  /** POST (webhooks) sends `body` with `headers`; give maxRedirects: 0, as a redirect would resend it. */
  method?: 'GET' | 'POST';
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export interface FetchedResource {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  contentType: string | null;
  body: Buffer;
  /** The response's validators, for a later conditional request (If-None-Match, If-Modified-Since). */
  etag?: string | null;
  lastModified?: string | null;
}

export const DEFAULT_USER_AGENT = 'agentbase-crawler/1.0 (+https://github.com/agentbase)';
const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * True for every address a crawler must not reach: anything ipaddr.js does not classify as
 * global 'unicast'. That is deliberately broad (6to4, NAT64 and Teredo count as private even
 * when they embed a public IPv4), because those forms can tunnel to an internal IPv4 and real
 * sites are reachable through their plain addresses anyway. Unparseable input counts as private.
 */
export function isPrivateAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns ::ffff:127.0.0.1 and ::ffff:7f00:1 into 127.0.0.1, so they get v4 ranges.
    address = ipaddr.process(bare);
  } catch {
    return true;
  }
  return address.range() !== 'unicast';
}

/**
 * How a hop's host becomes addresses, and which addresses are refused. Production uses the
 * system resolver and isPrivateAddress; tests swap both to prove the per-hop checks, since a
 * test machine has no public addresses to redirect from.
 * @internal
 */
export interface AddressPolicy {
  resolve(hostname: string): Promise<dns.LookupAddress[]>;
  isBlocked(ip: string): boolean;
}

function systemPolicy(allowPrivate: boolean): AddressPolicy {
  return {
    resolve: (hostname) => dns.promises.lookup(hostname, { all: true }),
    isBlocked: allowPrivate ? () => false : isPrivateAddress,
  };
}

/**
 * Parses a URL and refuses what no request should be made for: schemes other than http(s),
 * embedded credentials, and literal IP hosts the policy blocks (Node connects to literal IPs
 * without calling `lookup`, so they must be checked here). Host names are checked later, at
 * connect time. Callers can use it to reject a URL early, before queueing any work.
 */
export function checkUrl(url: string | URL, allowPrivate: boolean): URL {
  return checkUrlWith(url, systemPolicy(allowPrivate));
}

function checkUrlWith(input: string | URL, policy: AddressPolicy): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new FetchError('BAD_URL', `Not a valid URL: ${String(input).slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError('BAD_URL', `Only http and https URLs can be fetched, not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new FetchError('BAD_URL', 'URLs with credentials are refused.');
  }
  const host = hostOf(url);
  if (!host) throw new FetchError('BAD_URL', 'The URL has no host.');
  if (net.isIP(host) && policy.isBlocked(host)) {
    throw new FetchError('PRIVATE_ADDRESS', `Refusing to fetch a private address: ${host}`);
  }
  return url;
}

/** URL keeps IPv6 hosts bracketed; net and ipaddr.js want them bare. */
function hostOf(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/**
 * The `lookup` handed to net.connect: resolves once, refuses the host if ANY of its addresses
 * is blocked (a name with one public and one private address would otherwise let the
 * connection race onto the private one), and hands net exactly the checked addresses. As net
 * connects to what `lookup` returns, a DNS answer that changes between check and connect
 * (rebinding) cannot reach the socket.
 */
function pinnedLookup(policy: AddressPolicy): net.LookupFunction {
  return (hostname, options, callback) => {
    policy.resolve(hostname).then(
      (resolved) => {
        const blocked = resolved.find((a) => policy.isBlocked(a.address));
        if (blocked) {
          callback(
            new FetchError('PRIVATE_ADDRESS', `Refusing to fetch ${hostname}: it resolves to a private address (${blocked.address}).`),
            '',
          );
          return;
        }
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = family ? resolved.filter((a) => a.family === family) : resolved;
        if (usable.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`No address found for ${hostname}`);
          err.code = 'ENOTFOUND';
          callback(err, '');
          return;
        }
        if (options.all) callback(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/**
 * The real entry point, with the address policy as a parameter so tests can prove that every
 * redirect hop is re-checked. Use safeFetch.
 * @internal
 */
export async function safeFetchWithPolicy(
  input: string,
  opts: Omit<SafeFetchOptions, 'allowPrivate'>,
  policy: AddressPolicy,
): Promise<FetchedResource> {
  const maxRedirects = opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  opts.signal?.throwIfAborted();

  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new FetchError('TIMEOUT', `No complete response within ${timeoutMs} ms.`)),
    timeoutMs,
  );
  const onOuterAbort = () => controller.abort(opts.signal!.reason);
  opts.signal?.addEventListener('abort', onOuterAbort, { once: true });

  const headers = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const hop: HopContext = {
    // A conditional request takes 304 for an answer: the caller's copy is current.
    conditional: 'if-none-match' in headers || 'if-modified-since' in headers,
    signal: controller.signal,
    lookup: pinnedLookup(policy),
    maxBytes: opts.maxBytes ?? DEFAULT_MAX_BYTES,
    method: opts.method ?? 'GET',
    body: opts.body,
    headers: {
      'user-agent': opts.userAgent ?? DEFAULT_USER_AGENT,
      accept: opts.accept ?? '*/*',
      'accept-encoding': 'gzip, deflate, br',
      ...opts.headers,
    },
  };
  try {
    let url = checkUrlWith(input, policy);
    for (let redirects = 0; ; redirects++) {
      const result = await fetchOnce(url, hop);
      if (!('location' in result)) return { url: url.href, ...result };
      if (redirects >= maxRedirects) {
        throw new FetchError('TOO_MANY_REDIRECTS', `More than ${maxRedirects} redirects, last to ${result.location}`);
      }
      let next: URL;
      try {
        next = new URL(result.location, url);
      } catch {
        throw new FetchError('BAD_URL', `Invalid redirect location: ${result.location.slice(0, 200)}`);
      }
      url = checkUrlWith(next, policy);
    }
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onOuterAbort);
  }
}

export async function safeFetch(url: string, opts: SafeFetchOptions): Promise<FetchedResource> {
  return safeFetchWithPolicy(url, opts, systemPolicy(opts.allowPrivate));
}

interface HopContext {
  conditional: boolean;
  signal: AbortSignal;
  lookup: net.LookupFunction;
  maxBytes: number;
  headers: Record<string, string>;
  method: 'GET' | 'POST';
  body?: string | Buffer;
}

type HopResult = { location: string } | { status: number; contentType: string | null; body: Buffer; etag: string | null; lastModified: string | null };

/** One request, no redirect following. Settles exactly once and always tears the socket down. */
function fetchOnce(url: URL, ctx: HopContext): Promise<HopResult> {
  return new Promise<HopResult>((resolve, reject) => {
    let settled = false;
    let response: http.IncomingMessage | undefined;
    let decoders: Transform[] = [];

    const finish = (error: unknown, value?: HopResult) => {
      if (settled) return;
      settled = true;
      ctx.signal.removeEventListener('abort', onAbort);
      for (const d of decoders) d.destroy();
      response?.destroy();
      request.destroy();
      if (error === undefined) resolve(value!);
      else reject(asFetchError(error, ctx.signal));
    };
    const onAbort = () => finish(ctx.signal.reason);

    const client = url.protocol === 'https:' ? https : http;
    // agent: false gives every request its own socket: a pooled keep-alive socket could have
    // been opened by other code without our lookup, so reusing it would skip the check.
    const request = client.request(url, { method: ctx.method, headers: ctx.headers, agent: false, lookup: ctx.lookup });
    if (ctx.signal.aborted) {
      onAbort();
      return;
    }
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    request.on('error', (err) => finish(err));

    request.on('response', (res) => {
      response = res;
      res.on('error', (err) => finish(err));
      const status = res.statusCode ?? 0;

      if (REDIRECT_STATUSES.has(status) && res.headers.location) {
        finish(undefined, { location: res.headers.location });
        return;
      }
      const validators = { etag: headerText(res.headers.etag), lastModified: headerText(res.headers['last-modified']) };
      if (status === 304 && ctx.conditional) {
        finish(undefined, { status, contentType: null, body: Buffer.alloc(0), ...validators });
        return;
      }
      // 3xx without a usable Location (300, 304, ...) has no body worth ingesting either.
      if (status >= 300 || status < 200) {
        finish(new FetchError('HTTP_STATUS', `HTTP ${status} for ${url.href}`, status));
        return;
      }

      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > ctx.maxBytes) {
        finish(new FetchError('TOO_LARGE', `The response declares ${declared} bytes, over the cap of ${ctx.maxBytes}.`));
        return;
      }

      const encodings = (res.headers['content-encoding'] ?? '')
        .split(',')
        .map((e) => e.trim().toLowerCase())
        .filter((e) => e && e !== 'identity');
      const unknown = encodings.find((e) => !CONTENT_CODINGS.includes(e));
      if (unknown) {
        finish(new FetchError('UNSUPPORTED_CONTENT', `Unsupported content encoding: ${unknown}`));
        return;
      }

      const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : null;
      const chunks: Buffer[] = [];
      let decodedBytes = 0;
      let rawBytes = 0;
      const tooLarge = () =>
        finish(new FetchError('TOO_LARGE', `The response body is over the cap of ${ctx.maxBytes} bytes.`));
      const collect = (chunk: Buffer) => {
        decodedBytes += chunk.length;
        if (decodedBytes > ctx.maxBytes) tooLarge();
        else chunks.push(chunk);
      };
      const done = () => finish(undefined, { status, contentType, body: Buffer.concat(chunks), ...validators });

      let first: Transform | undefined;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        // Raw bytes are capped too, so a compressed body cannot make us buffer beyond the cap.
        rawBytes += chunk.length;
        if (rawBytes > ctx.maxBytes) return tooLarge();
        if (encodings.length === 0) return collect(chunk);
        // Built on the first chunk because "deflate" is zlib-wrapped or raw depending on the
        // server, which only the first byte tells.
        if (!first) {
          // Content-Encoding lists codings in the order applied: undo them in reverse.
          decoders = [...encodings].reverse().map((e, i) => contentDecoder(e, i === 0 ? chunk[0] : undefined)!);
          for (let i = 0; i < decoders.length - 1; i++) decoders[i]!.pipe(decoders[i + 1]!);
          for (const d of decoders) {
            d.on('error', (err) => finish(new FetchError('NETWORK', `Could not decode the ${encodings.join(', ')} body: ${err.message}`)));
          }
          const last = decoders[decoders.length - 1]!;
          last.on('data', (c: Buffer) => {
            if (!settled) collect(c);
          });
          last.on('end', done);
          first = decoders[0]!;
        }
        first.write(chunk);
      });
      res.on('end', () => {
        if (settled) return;
        // An empty body with a Content-Encoding (HEAD-like replies) would fail to "decompress".
        if (first) first.end();
        else done();
      });
    });
    request.end(ctx.body);
  });
}

function headerText(value: string | string[] | undefined): string | null {
  return typeof value === 'string' && value.length <= 1000 ? value : null;
}

function asFetchError(error: unknown, signal: AbortSignal): unknown {
  if (error instanceof FetchError) return error;
  // The caller's own abort: hand its reason back unchanged.
  if (signal.aborted && error === signal.reason) return error;
  const e = error as NodeJS.ErrnoException;
  const detail = e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? error);
  return new FetchError('NETWORK', `Network error: ${detail}`);
}
