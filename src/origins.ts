/**
 * Which web pages may call an agent or a datastore: the rule of `allowedOrigins`, in one place.
 *
 * An agent or a datastore may name the origins (`scheme://host[:port]`) whose pages call it; an
 * empty list means any page. The list binds what a browser page does on a visitor's behalf:
 * anonymous callers and other organizations. It does not bind the owning organization's own
 * credentials, nor callers that send no `Origin` (servers, curl), which no browser can be.
 *
 * The HTTP side (which CORS headers a preflight gets) is src/http/cors.ts; it reads the same
 * `originAllowed`.
 */
import { isOwner, type Owned } from './access.ts';
import type { Auth } from './auth/auth.ts';
import { AppError, badInput } from './errors.ts';

/** More than a handful of sites per agent is a sign of a list that should be empty (any). */
export const MAX_ALLOWED_ORIGINS = 50;

export interface OriginRestricted extends Owned {
  allowedOrigins?: readonly string[] | null;
}

/** Whether a page of `origin` may call a resource with this list (empty or absent: any). */
export function originAllowed(allowed: readonly string[] | null | undefined, origin: string): boolean {
  return !allowed?.length || allowed.includes(origin);
}

/**
 * Refuses a browser page outside the resource's list, before anything is spent on the request
 * (a model call, an embedding). Throws FORBIDDEN.
 */
export function assertOriginAllowed(auth: Auth, origin: string | undefined, resource: OriginRestricted, what: string): void {
  if (origin === undefined || isOwner(auth, resource) || originAllowed(resource.allowedOrigins, origin)) return;
  throw new AppError('FORBIDDEN', `This ${what.toLowerCase()} does not accept requests from pages of ${origin}.`, { origin });
}

/**
 * The origin a value names, as browsers send it in `Origin` (lower-case, no default port), or
 * null when it is not exactly `http(s)://host[:port]` (a path, a wildcard, credentials...).
 */
export function canonicalOrigin(value: string): string | null {
  const trimmed = value.trim().replace(/\/$/, '');
  if (!/^https?:\/\/[^/?#@*\s]+$/i.test(trimmed)) return null;
  try {
    const url = new URL(trimmed);
    return url.origin === 'null' ? null : url.origin;
  } catch {
    return null;
  }
}

/**
 * An `allowedOrigins` input as stored: canonical, without duplicates; null or [] clears the
 * list (any origin). Throws BAD_USER_INPUT naming the field and the first bad entry.
 */
export function normalizeAllowedOrigins(values: readonly string[] | null | undefined, field = 'allowedOrigins'): string[] {
  if (!values) return [];
  if (values.length > MAX_ALLOWED_ORIGINS) {
    throw badInput(`${field} may list at most ${MAX_ALLOWED_ORIGINS} origins (got ${values.length}).`, { field });
  }
  const origins: string[] = [];
  for (const [i, value] of values.entries()) {
    if (value.trim() === '*') throw badInput(`${field}[${i}]: "*" is not an origin; leave ${field} empty to accept any origin.`, { field });
    const origin = canonicalOrigin(value);
    if (!origin) {
      throw badInput(`${field}[${i}] must be an origin such as https://example.com or http://localhost:8080 (scheme, host and port only; got "${value.slice(0, 200)}").`, { field });
    }
    if (!origins.includes(origin)) origins.push(origin);
  }
  return origins;
}
