/**
 * Every access rule of the service, in one place. Services ask here before they act.
 *
 * | caller                         | public resource | private resource | change anything |
 * |--------------------------------|-----------------|------------------|-----------------|
 * | anonymous                      | read            | NOT_FOUND        | UNAUTHENTICATED |
 * | invalid Bearer token           | UNAUTHENTICATED | UNAUTHENTICATED  | UNAUTHENTICATED |
 * | key/session of another org     | read            | NOT_FOUND        | FORBIDDEN (public) / NOT_FOUND (private) |
 * | key/session of the owning org  | read            | read             | allowed         |
 *
 * "Not found or no access" never reveals that a private thing exists.
 */
import type { Auth, Member } from './auth/auth.ts';
import { MemberRole } from './auth/membership.entity.ts';
import { AppError, forbidden, notFound, unauthenticated } from './errors.ts';
import { Visibility } from './vocabulary.ts';

export interface Owned {
  organization: { id: string };
  visibility?: Visibility;
}

/** A member of some organization (API key or session). Throws UNAUTHENTICATED. */
export function requireMember(auth: Auth): Member {
  if (auth.kind === 'anonymous') throw unauthenticated();
  return auth;
}

/** A signed-in user (not an API key). Throws UNAUTHENTICATED, FORBIDDEN. */
export function requireUser(auth: Auth): Extract<Auth, { kind: 'session' }> {
  const member = requireMember(auth);
  if (member.kind !== 'session') throw forbidden('This operation needs a signed-in user, not an API key.');
  return member;
}

/** A signed-in owner or admin: managing API keys. Throws UNAUTHENTICATED, FORBIDDEN. */
export function requireAdmin(auth: Auth): Extract<Auth, { kind: 'session' }> {
  const user = requireUser(auth);
  if (user.role !== MemberRole.owner && user.role !== MemberRole.admin) {
    throw forbidden('Only owners and admins of the organization can manage API keys.');
  }
  return user;
}

export function isOwner(auth: Auth, resource: Owned): boolean {
  return auth.kind !== 'anonymous' && auth.organizationId === resource.organization.id;
}

/** Read: public to anyone, private to its organization. Throws NOT_FOUND. */
export function assertCanRead<T extends Owned>(auth: Auth, resource: T | null, what: string): T {
  if (!resource) throw notFound(what);
  if (resource.visibility === Visibility.public || isOwner(auth, resource)) return resource;
  throw notFound(what);
}

/** Change: only its organization. Throws UNAUTHENTICATED, FORBIDDEN, NOT_FOUND. */
export function assertCanChange<T extends Owned>(auth: Auth, resource: T | null, what: string): T {
  requireMember(auth);
  if (!resource) throw notFound(what);
  if (isOwner(auth, resource)) return resource;
  if (resource.visibility === Visibility.public) {
    throw new AppError('FORBIDDEN', `This ${what.toLowerCase()} belongs to another organization.`);
  }
  throw notFound(what);
}
