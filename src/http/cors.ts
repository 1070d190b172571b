/**
 * CORS for every path the server answers (REST, /graphql, /graphql/stream, upload links and any
 * later one), applied once at the top of the server (src/app.ts), before any route is chosen.
 *
 * - Requests without a session cookie (none, or a Bearer token: the token is the credential) are
 *   answered to pages of any origin (`Access-Control-Allow-Origin: *`).
 * - The session cookie is a credential only from the origins of CORS_ORIGINS (and the service's
 *   own): those get their origin echoed with `Access-Control-Allow-Credentials: true`; from any
 *   other page the cookie is dropped before anything reads it, so the request is anonymous.
 * - An agent's or datastore's `allowedOrigins` (src/origins.ts) decides the preflight of a path
 *   that names it: a page outside the list gets no `Access-Control-Allow-Origin`. A preflight
 *   that announces an Authorization header is let through: the credential, read on the request,
 *   may be the owner's, whom the list does not bind; the service answers 403 otherwise.
 *
 * Why not the `cors` package: its answer depends only on the request's origin, while here a
 * preflight's depends on the agent or datastore its path names and the cookie must be dropped.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ANONYMOUS } from '../auth/auth.ts';
import type { Config } from '../config.ts';
import type { Orm } from '../db/orm.ts';
import { AppError, errorBody, statusOf } from '../errors.ts';
import type { Services } from '../services.ts';
import { pathnameOf } from './respond.ts';

export const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
/** What our clients send: JSON, keys, SSE resumption, Apollo's CSRF header, graphql-sse's token. */
export const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, Last-Event-ID, X-Request-Id, Apollo-Require-Preflight, X-Apollo-Operation-Name, X-GraphQL-Event-Stream-Token';
/** What a browser client needs to read: its budget, when to retry, the ids to quote and to continue with. */
export const EXPOSED_HEADERS = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id, X-Conversation-Id';
/** Browsers cap it (Chromium at 2 hours); ten minutes lets a changed list take effect soon. */
export const MAX_AGE_SECONDS = 600;

type Resource = { kind: 'agent' | 'datastore'; id: string };

/** A REST path (under the base path) whose one group is the id of an agent or datastore a page may call anonymously. */
export interface ResourcePath {
  pattern: RegExp;
  kind: Resource['kind'];
}

export interface CorsOptions {
  config: Pick<Config, 'corsOrigins' | 'restBasePath'>;
  orm: Orm;
  /** The cached reads of agents and datastores: a preflight costs no database read once they hold it. */
  services: Pick<Services, 'agents' | 'datastores'>;
  onInternalError: (error: unknown, req: IncomingMessage) => void;
  /** From the REST rows marked `origins` (rest/handler.ts originGuardedPaths). */
  resourcePaths: ResourcePath[];
}

/**
 * Returns a handler that sets the CORS headers of every response and answers preflights itself
 * (returns true for those; false: the request goes on to the routes).
 */
export function createCors(opts: CorsOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const credentialed = new Set(opts.config.corsOrigins);
  const prefix = opts.config.restBasePath;

  return (req, res) => {
    // The same URL answers each origin differently: caches must keep them apart.
    res.setHeader('Vary', 'Origin');
    const origin = req.headers.origin;
    if (typeof origin !== 'string') return false;
    const withCookie = credentialed.has(origin) || sameOrigin(req, origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      void preflight(req, res, origin, withCookie);
      return true;
    }
    if (!withCookie) delete req.headers.cookie;
    allow(res, origin, withCookie);
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    return false;
  };

  async function preflight(req: IncomingMessage, res: ServerResponse, origin: string, withCookie: boolean) {
    try {
      const announced = String(req.headers['access-control-request-headers'] ?? '').toLowerCase();
      const refusal = withCookie || /(^|[\s,])authorization([\s,]|$)/.test(announced) ? null : await refusalOf(req, origin);
      req.resume(); // a preflight has no body; whatever came is read and dropped
      if (refusal) {
        const json = JSON.stringify(errorBody(refusal.code, refusal.message));
        return void res.writeHead(statusOf(refusal.code), { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) }).end(json);
      }
      allow(res, origin, withCookie);
      res.writeHead(204, {
        'access-control-allow-methods': ALLOWED_METHODS,
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': String(MAX_AGE_SECONDS),
        'content-length': '0',
      });
      res.end();
    } catch (err) {
      opts.onInternalError(err, req);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(errorBody('INTERNAL', 'Internal error.')));
    }
  }

  /** FORBIDDEN when the path names an agent or datastore whose list leaves the origin out; else null. */
  async function refusalOf(req: IncomingMessage, origin: string): Promise<AppError | null> {
    const resource = resourceOf(req.url ?? '/');
    if (!resource) return null;
    const em = opts.orm.em.fork();
    try {
      // As an anonymous caller: a private or unknown one is left to the request (its 404 says no more).
      if (resource.kind === 'agent') await opts.services.agents.get(em, ANONYMOUS, resource.id, origin);
      else await opts.services.datastores.getForQuery(em, ANONYMOUS, resource.id, origin);
      return null;
    } catch (err) {
      if (err instanceof AppError && err.code !== 'INTERNAL') return err.code === 'FORBIDDEN' ? err : null;
      throw err;
    }
  }

  function resourceOf(url: string): Resource | null {
    const pathname = pathnameOf(url);
    if (prefix && !pathname.startsWith(`${prefix}/`)) return null;
    const path = pathname.slice(prefix.length);
    for (const { pattern, kind } of opts.resourcePaths) {
      const m = pattern.exec(path);
      if (!m) continue;
      try {
        return { kind, id: decodeURIComponent(m[1]!) };
      } catch {
        return null; // the request itself answers 400
      }
    }
    return null;
  }
}

function allow(res: ServerResponse, origin: string, withCookie: boolean): void {
  if (withCookie) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
  } else res.setHeader('Access-Control-Allow-Origin', '*');
}

/** A page of this service's own host (behind a proxy that keeps Host): its cookie is its own. */
function sameOrigin(req: IncomingMessage, origin: string): boolean {
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}
