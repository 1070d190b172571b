/**
 * The browser pages: the console at `/`, and whatever other pages console/vite.config.ts builds
 * (listed in PAGES), with their hashed files under `/ui/`. Framework-free like the docs page:
 * the files are listed once at boot from console/dist (built at `npm install`), so a request can
 * only ever name a file that build wrote. CONSOLE_ENABLED=false serves none of it.
 */
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorBody } from '../errors.ts';
import type { Context } from '../graphql/context.ts';
import { chatPageCsp, isChatPagePath } from './chat-page.ts';
import { pathnameOf, sendJson } from './respond.ts';

export const CONSOLE_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../console/dist');

/**
 * Scripts, styles, fonts and connections from this server only; no inline script anywhere.
 * Images may be `data:` URLs: pico.css draws its checkboxes and arrows with them.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface ConsolePage {
  /** The built HTML file, relative to console/dist. */
  file: string;
  /** Whether this page answers the (GET) request. */
  matches(pathname: string, req: IncomingMessage): boolean;
  /** Its Content-Security-Policy; CONSOLE_CSP unless the page needs another. */
  csp?: string | ((req: IncomingMessage, lookup: PageLookup) => string | Promise<string>);
}

/** What a page's `csp` may consult: an anonymous request context (services, database). */
export interface PageLookup {
  context(req: IncomingMessage): Promise<Context>;
}

/** The pages, first match wins. Add a row with its HTML entry in console/vite.config.ts. */
export const PAGES: ConsolePage[] = [
  { file: 'index.html', matches: (p) => p === '/' || p === '/index.html' },
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
export function createConsoleHandler(opts: { enabled: boolean; dist?: string; pages?: ConsolePage[]; lookup?: PageLookup }): (req: IncomingMessage, res: ServerResponse) => boolean {
  if (!opts.enabled) return () => false;
  const dist = opts.dist ?? CONSOLE_DIST;
  const pages = opts.pages ?? PAGES;
  const assets = listAssets(dist);

  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const pathname = pathnameOf(req.url);
    const asset = assets.get(pathname);
    if (asset) {
      res.writeHead(200, {
        'content-type': asset.type,
        'content-length': asset.size,
        // Hashed names: a new build writes new names, so a cached file never goes stale.
        'cache-control': 'public, max-age=31536000, immutable',
      });
      if (req.method === 'HEAD') return void res.end(), true;
      createReadStream(asset.file)
        .on('error', () => res.destroy())
        .pipe(res);
      return true;
    }
    const page = pages.find((p) => p.matches(pathname, req));
    if (!page) return false;
    void servePage(req, res, dist, page, opts.lookup ?? NO_LOOKUP);
    return true;
  };
}

const NO_LOOKUP: PageLookup = {
  context: () => Promise.reject(new Error('No page lookup was given to createConsoleHandler.')),
};

async function servePage(req: IncomingMessage, res: ServerResponse, dist: string, page: ConsolePage, lookup: PageLookup): Promise<void> {
  const file = path.join(dist, page.file);
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return sendJson(res, 503, errorBody('SERVICE_UNAVAILABLE', 'The console is not built: run `npm run build:console` (npm install runs it).'));
  }
  let csp: string;
  try {
    csp = typeof page.csp === 'function' ? await page.csp(req, lookup) : (page.csp ?? CONSOLE_CSP);
  } catch {
    csp = CONSOLE_CSP;
  }
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': size,
    'content-security-policy': csp,
    // The page names this build's hashed files: always ask again.
    'cache-control': 'no-cache',
  });
  if (req.method === 'HEAD') return void res.end();
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}
