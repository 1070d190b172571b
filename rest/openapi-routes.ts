/**
 * `{base}/openapi.json` and the docs page `{base}/docs`, answered before the REST rows. The page
 * is Swagger UI from the installed swagger-ui-dist package and our own initializer file: nothing
 * is loaded from anywhere but this server, so it works offline and behind a strict CSP.
 */
import { statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenApiDocument } from './openapi.ts';
import { pathnameOf, sendFile } from '../src/http/respond.ts';

// The package's own locator, without loading its 1.5 MB browser bundle into the server.
const swaggerUiDir = (createRequire(import.meta.url)('swagger-ui-dist/absolute-path.js') as () => string)();
const ownDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'docs-page');

/**
 * Scripts, styles, fonts and connections: this server only. Images may also be `data:` URLs:
 * Swagger UI's stylesheet draws its icons with them (they are inline, nothing is fetched).
 */
export const DOCS_CSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: path.join(swaggerUiDir, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: path.join(swaggerUiDir, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: path.join(swaggerUiDir, 'favicon-32x32.png'), type: 'image/png' },
  'init.js': { file: path.join(ownDir, 'init.js'), type: 'text/javascript; charset=utf-8' },
};

function page(basePath: string): string {
  // REST_BASE_PATH is validated by config.ts to [A-Za-z0-9/_-]: nothing in it needs escaping.
  const docs = `${basePath}/docs`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agentbase REST API</title>
<link rel="stylesheet" href="${docs}/swagger-ui.css">
<link rel="icon" type="image/png" href="${docs}/favicon-32x32.png">
</head>
<body>
<main id="swagger-ui" data-spec="${basePath}/openapi.json"></main>
<script src="${docs}/swagger-ui-bundle.js"></script>
<script src="${docs}/init.js"></script>
</body>
</html>
`;
}

/** Returns a handler that answers the document, the page and its files, and returns false for anything else. */
export function createDocsHandler(opts: { basePath: string; document: OpenApiDocument }): (req: IncomingMessage, res: ServerResponse) => boolean {
  const base = opts.basePath;
  const json = JSON.stringify(opts.document);
  const html = page(base);
  // A missing file fails the boot, not the first visitor.
  const sizes = new Map(Object.entries(ASSETS).map(([name, asset]) => [name, statSync(asset.file).size]));

  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const pathname = pathnameOf(req.url);
    if (pathname === `${base}/openapi.json`) {
      send(req, res, 'application/json; charset=utf-8', json, { 'cache-control': 'no-cache' });
      return true;
    }
    if (pathname === `${base}/docs` || pathname === `${base}/docs/`) {
      send(req, res, 'text/html; charset=utf-8', html, { 'content-security-policy': DOCS_CSP, 'cache-control': 'no-cache' });
      return true;
    }
    const name = pathname.startsWith(`${base}/docs/`) ? pathname.slice(base.length + 6) : null;
    if (name === null || !Object.hasOwn(ASSETS, name)) return false;
    const asset = ASSETS[name]!;
    sendFile(req, res, asset.file, sizes.get(name)!, { 'content-type': asset.type, 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' });
    return true;
  };
}

function send(req: IncomingMessage, res: ServerResponse, type: string, body: string, headers: Record<string, string>) {
  res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'x-content-type-options': 'nosniff', ...headers });
  res.end(req.method === 'HEAD' ? undefined : body);
}
