import type { IncomingMessage } from 'node:http';
import type { Response } from 'express';
import { SESSION_COOKIE } from '../auth/auth.resolver.ts';
import { ANONYMOUS, type Auth } from '../auth/auth.ts';
import type { Em, Orm } from '../db/orm.ts';
import type { Context } from '../graphql/context.ts';
import type { Services } from '../services.ts';

/**
 * The per-request context for GraphQL, graphql-sse and REST. The EntityManager is forked on
 * first use: a request answered from caches never touches the database.
 */
export class RequestContext implements Context {
  private forked?: Em;
  auth: Auth = ANONYMOUS;
  origin?: string;

  constructor(
    private readonly orm: Orm,
    readonly services: Services,
    readonly ip: string,
    readonly res?: Response,
  ) {}

  get em(): Em {
    return (this.forked ??= this.orm.em.fork());
  }
}

/**
 * Throws UNAUTHENTICATED for a Bearer token that is unknown, revoked or expired. With
 * `authenticate: false` (a signed link is the credential) no header is read: anonymous.
 */
export async function buildContext(orm: Orm, services: Services, req: IncomingMessage, res?: Response, opts: { authenticate: boolean } = { authenticate: true }): Promise<Context> {
  const ctx = new RequestContext(orm, services, clientIp(req), res);
  // Held to an agent's or datastore's allowedOrigins (src/origins.ts); "null" (a sandboxed page) too.
  // A page of this service itself (the public chat page) is not another site: its own origin is never held to a list.
  if (typeof req.headers.origin === 'string' && !isOwnPage(req, req.headers.origin)) ctx.origin = req.headers.origin;
  if (!opts.authenticate) return ctx;
  const bearer = bearerToken(req.headers.authorization);
  const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
  if (bearer || cookie) ctx.auth = await services.auth.authenticate(ctx.em, { bearer, cookie });
  return ctx;
}

/** The request comes from a page served by this host (behind a proxy that keeps Host). */
function isOwnPage(req: IncomingMessage, origin: string): boolean {
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** The peer address; behind a proxy on loopback, the first X-Forwarded-For entry. */
export function clientIp(req: IncomingMessage): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  const forwarded = req.headers['x-forwarded-for'];
  if (forwarded && (peer === '127.0.0.1' || peer === '::1' || peer === '::ffff:127.0.0.1')) {
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
    if (first) return first;
  }
  return peer;
}

function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  // A malformed Authorization header is an invalid credential, not an anonymous call.
  return match ? match[1]! : header;
}

export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return null;
}
