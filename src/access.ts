/**
 * Every access rule of the service, in one place. Services ask here first, `(auth, resource)`,
 * and act only on what these functions hand back.
 *
 * | caller                         | public resource | private resource | change anything |
 * |--------------------------------|-----------------|------------------|-----------------|
 * | anonymous                      | read            | NOT_FOUND        | UNAUTHENTICATED |
 * | invalid Bearer token           | UNAUTHENTICATED | UNAUTHENTICATED  | UNAUTHENTICATED |
 * | key/session of another org     | read            | NOT_FOUND        | FORBIDDEN (public) / NOT_FOUND (private) |
 * | key/session of the owning org  | read            | read             | allowed         |
 *
 * Also here: API keys are managed by signed-in owners and admins; fields marked `@Authorized()`
 * on an owned object are for its organization only; a form's chat is open to anyone once it is
 * published; a conversation id is itself the credential to read that conversation.
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

/** The caller belongs to the organization that owns the resource. */
export function isOwner(auth: Auth, resource: Owned): boolean {
  return auth.kind !== 'anonymous' && auth.organizationId === resource.organization.id;
}

/**
 * Anyone but a member of the owning organization: an anonymous visitor or another organization.
 * Outsiders are held to the per-visitor and per-address rates.
 */
export function isOutsider(auth: Auth, resource: Owned): boolean {
  return !isOwner(auth, resource);
}

/** Public to anyone, private to its organization. */
function canRead(auth: Auth, resource: Owned): boolean {
  return resource.visibility === Visibility.public || isOwner(auth, resource);
}

/** Read: public to anyone, private to its organization. Throws NOT_FOUND. */
export function assertCanRead<T extends Owned>(auth: Auth, resource: T | null, what: string): T {
  if (resource && canRead(auth, resource)) return resource;
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

/**
 * Things that have no public side (forms, a datastore being written to by a member): its
 * organization only, and to anyone else it does not exist. Throws UNAUTHENTICATED, NOT_FOUND.
 */
export function assertOwned<T extends Owned>(auth: Auth, resource: T | null, what: string): T {
  requireMember(auth);
  if (resource && isOwner(auth, resource)) return resource;
  throw notFound(what);
}

/**
 * Writing documents into a datastore: its organization; also anyone when the datastore is public
 * and the operation is one the REST interface opens to the public (`publicAllowed`).
 * Throws UNAUTHENTICATED, NOT_FOUND.
 */
export function assertCanWriteDatastore<T extends Owned>(auth: Auth, datastore: T | null, opts: { publicAllowed: boolean }): T {
  if (datastore && opts.publicAllowed && datastore.visibility === Visibility.public) return datastore;
  return assertOwned(auth, datastore, 'Datastore');
}

/** A form's chat: open to anyone once published; unpublished forms do not exist for it. Throws NOT_FOUND. */
export function assertCanFillForm<T extends { published: boolean }>(form: T | null): T {
  if (form?.published) return form;
  throw notFound('Form');
}

/**
 * A field marked `@Authorized()` (the GraphQL auth checker): any member for an operation; on an
 * owned object, members of its organization only. Throws UNAUTHENTICATED, FORBIDDEN.
 */
export function requireOwnerField(auth: Auth, root: unknown): Member {
  const member = requireMember(auth);
  if (root && typeof root === 'object' && 'organization' in root && !isOwner(auth, root as Owned)) {
    throw forbidden('This field is visible to the owning organization only.');
  }
  return member;
}
