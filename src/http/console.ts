/**
 * The browser pages: the console at `/`, and whatever other pages console/vite.config.ts builds
 * (listed in PAGES), with their hashed files under `/ui/`. Framework-free like the docs page:
 * the files are listed once at boot from console/dist (built at `npm install`), so a request can
 * only ever name a file that build wrote. CONSOLE_ENABLED=false serves none of it. The
 * embeddable chat widget, built by console/vite.widget.config.ts, is served at `/widget.js`.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fresh from 'fresh';
import Negotiator from 'negotiator';
import { errorBody } from '../errors.ts';
import { chatPageCsp, isChatPagePath } from './chat-page.ts';
import { CONSOLE_CSP, type PageLookup } from './page-policy.ts';
import { pathnameOf, sendFile, sendJson } from './respond.ts';

export const CONSOLE_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../console/dist');

export { CONSOLE_CSP, type PageLookup };

export interface ConsolePage {
  /** The built HTML file, relative to console/dist. */
  file: string;
  /** Whether this page answers the (GET) request. */
  matches(pathname: string, req: IncomingMessage): boolean;
  /** Its Content-Security-Policy; CONSOLE_CSP unless the page needs another. */
  csp?: string | ((req: IncomingMessage, lookup: PageLookup) => string | Promise<string>);
}

/**
 * The GraphQL IDE's policy: the console's, plus what GraphiQL and Monaco need and no more.
 * - style-src 'unsafe-inline': Monaco writes its theme and each editor's layout into <style>
 *   elements it creates at run time, and GraphiQL's dialogs (Radix) add one too; no script can
 *   come of it (script-src stays 'self').
 * - font-src data:: Monaco's and GraphiQL's icon font (codicon) is a data: URL inside their CSS.
 * - worker-src 'self': Monaco's language workers are files of this build (no blob: workers).
 * No 'unsafe-eval': neither needs it.
 */
export const IDE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * Whether the client prefers an HTML page to JSON: a browser's address bar, not a GraphQL client's
 * GET (`application/json`, `application/graphql-response+json`, or `*\/*` as curl sends: JSON is
 * listed first, so a wildcard picks it).
 */
export function prefersHtml(accept: string | undefined): boolean {
  return new Negotiator({ headers: { accept } }).mediaType(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';
}

/** The pages, first match wins. Add a row with its HTML entry in console/vite.config.ts. */
export const PAGES: ConsolePage[] = [
  { file: 'index.html', matches: (p) => p === '/' || p === '/index.html' },
  // A browser opening /graphql; a GraphQL GET or POST (JSON) goes on to Apollo.
  { file: 'ide.html', matches: (p, req) => p === '/graphql' && prefersHtml(req.headers.accept), csp: IDE_CSP },
  { file: 'chat.html', matches: isChatPagePath, csp: chatPageCsp },
];

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
};

interface Asset {
  file: string;
  size: number;
  type: string;
}

/** Every file of the build's `ui/` folder by its URL path (`/ui/…`). */
function listAssets(dist: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const dir = path.join(dist, 'ui');
  if (!existsSync(dir)) return assets;
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(dir, name);
    const stat = statSync(file);
    if (!stat.isFile()) continue;
    assets.set(`/ui/${name.split(path.sep).join('/')}`, { file, size: stat.size, type: TYPES[path.extname(name)] ?? 'application/octet-stream' });
  }
  return assets;
}

/**
 * Returns a handler that answers the console's pages and files and returns false for anything
 * else; with `enabled` false it answers nothing. A page whose build is missing answers 503 with
 * how to build it, so a checkout without `npm install` says what is wrong.
 */
export function createConsoleHandler(opts: { enabled: boolean; dist?: string; pages?: ConsolePage[]; restBasePath?: string; lookup?: PageLookup }): (req: IncomingMessage, res: ServerResponse) => boolean {
  if (!opts.enabled) return () => false;
  const dist = opts.dist ?? CONSOLE_DIST;
  const pages = opts.pages ?? PAGES;
  const assets = listAssets(dist);
  const widget = readWidget(dist, opts.restBasePath ?? '/api');
  // The pages are small and change only with a build (which needs a restart): read once.
  const html = new Map(pages.map((p) => [p.file, readOrNull(path.join(dist, p.file))]));

  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const pathname = pathnameOf(req.url);
    if (pathname === WIDGET_PATH) return serveWidget(req, res, widget), true;
    const asset = assets.get(pathname);
    // Hashed names: a new build writes new names, so a cached file never goes stale.
    if (asset) return sendFile(req, res, asset.file, asset.size, { 'content-type': asset.type, 'cache-control': 'public, max-age=31536000, immutable' }), true;
    const page = pages.find((p) => p.matches(pathname, req));
    if (!page) return false;
    void servePage(req, res, html.get(page.file) ?? null, page, opts.lookup ?? NO_LOOKUP);
    return true;
  };
}

const NO_LOOKUP: PageLookup = {
  context: () => Promise.reject(new Error('No page lookup was given to createConsoleHandler.')),
};

async function servePage(req: IncomingMessage, res: ServerResponse, body: Buffer | null, page: ConsolePage, lookup: PageLookup): Promise<void> {
  if (!body) return sendJson(res, 503, errorBody('SERVICE_UNAVAILABLE', 'The console is not built: run `npm run build:console` (npm install runs it).'));
  let csp: string;
  try {
    csp = typeof page.csp === 'function' ? await page.csp(req, lookup) : (page.csp ?? CONSOLE_CSP);
  } catch {
    // A policy that cannot be worked out (the database is down) falls back to the strictest one.
    csp = CONSOLE_CSP;
  }
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': body.length,
    'content-security-policy': csp,
    // The page names this build's hashed files: always ask again.
    'cache-control': 'no-cache',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function readOrNull(file: string): Buffer | null {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
}

/** The widget's stable URL: host pages name it in their snippet, so it never moves under /ui/. */
export const WIDGET_PATH = '/widget.js';

/** The placeholder console/widget/widget.ts leaves for the REST base path. */
const REST_BASE_PLACEHOLDER = '%%AGENTBASE_REST_BASE%%';

interface Widget {
  body: Buffer;
  etag: string;
}

/**
 * The built widget with this service's REST base path written in (REST_BASE_PATH is checked by
 * src/config.ts to hold only characters that are safe inside a JavaScript string), read once.
 */
function readWidget(dist: string, restBasePath: string): Widget | null {
  const source = readOrNull(path.join(dist, 'widget.js'));
  if (!source) return null;
  const body = Buffer.from(source.toString('utf8').replaceAll(REST_BASE_PLACEHOLDER, restBasePath));
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

function serveWidget(req: IncomingMessage, res: ServerResponse, widget: Widget | null): void {
  if (!widget) return sendJson(res, 503, errorBody('SERVICE_UNAVAILABLE', 'The widget is not built: run `npm run build:console` (npm install runs it).'));
  const headers = {
    'content-type': 'text/javascript; charset=utf-8',
    // A stable name in other sites' pages: cached briefly, so a new version reaches visitors within minutes.
    'cache-control': 'public, max-age=300',
    etag: widget.etag,
  };
  if (fresh(req.headers, headers)) return void res.writeHead(304, headers).end();
  res.writeHead(200, { ...headers, 'content-length': widget.body.length });
  res.end(req.method === 'HEAD' ? undefined : widget.body);
}
