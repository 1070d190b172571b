import type { Request, Response } from 'express';
import type { Orm } from '../db/orm.ts';
import type { Context } from '../graphql/context.ts';
import type { Services } from '../services.ts';
import { SESSION_COOKIE } from '../auth/auth.resolver.ts';

/** Builds the per-request context used by GraphQL, graphql-sse and REST. Throws UNAUTHENTICATED. */
export async function buildContext(
  orm: Orm,
  services: Services,
  req: Request,
  res?: Response,
): Promise<Context> {
  const em = orm.em.fork();
  const auth = await services.auth.authenticate(em, {
    bearer: bearerToken(req.headers.authorization),
    cookie: readCookie(req.headers.cookie, SESSION_COOKIE),
  });
  return { em, auth, services, ip: req.ip ?? req.socket.remoteAddress ?? 'unknown', req, res };
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
