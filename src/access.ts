/**
 * Every access rule of the service, in one place. Services ask here first, `(auth, resource, kind)`,
 * and act only on what these functions hand back.
 *
 * | caller                          | public resource | private resource | change anything |
 * |---------------------------------|-----------------|------------------|-----------------|
 * | anonymous                       | read            | NOT_FOUND; UNAUTHENTICATED where the interface asks for a token (`assertCanUse`) | UNAUTHENTICATED |
 * | invalid Bearer token            | UNAUTHENTICATED | UNAUTHENTICATED  | UNAUTHENTICATED |
 * | key/session of another org      | read            | NOT_FOUND        | FORBIDDEN (public) / NOT_FOUND (private) |
 * | key/session of the owning org   | read            | read             | allowed         |
 * | its key, resource outside scope | NOT_FOUND       | NOT_FOUND        | NOT_FOUND       |
 * | its read-only key               | read            | read             | FORBIDDEN       |
 *
 * A scoped key's lists (`KeyScope`) narrow what it sees of its own organization: an agent or
 * datastore outside a list answers as if it did not exist. Another organization's public things
 * stay as readable as they are to anyone: refusing them would only make the key worse than none.
 *
 * Also here: API keys are managed by signed-in owners and admins; fields marked `@Authorized()`
 * on an owned object are for its organization only; a form's chat is open to anyone once it is
 * published; a conversation id is itself the credential to read that conversation.
 *
 * "Not found or no access" never reveals that a private thing exists.
 */
import type { Auth, KeyScope, Member } from './auth/auth.ts';
import { MemberRole } from './auth/membership.entity.ts';
import { AppError, forbidden, notFound, unauthenticated } from './errors.ts';
import { Visibility } from './vocabulary.ts';

export interface Owned {
  id: string;
  organization: { id: string };
  visibility?: Visibility;
}

/** What the rules tell apart: a key's lists name agents and datastores. */
export type Kind = 'Agent' | 'Datastore' | 'Form';

/** Reading (queries, answers, lists) or changing (writes, uploads, re-processing, deletes). */
export type Mode = 'read' | 'write';

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
export function isOwner(auth: Auth, resource: Pick<Owned, 'organization'>): boolean {
  return auth.kind !== 'anonymous' && auth.organizationId === resource.organization.id;
}

/**
 * Anyone but a member of the owning organization: an anonymous visitor or another organization.
 * Outsiders are held to the per-visitor and per-address rates.
 */
export function isOutsider(auth: Auth, resource: Pick<Owned, 'organization'>): boolean {
  return !isOwner(auth, resource);
}

function scopeOf(auth: Auth): KeyScope | undefined {
  return auth.kind === 'apiKey' ? auth.scope : undefined;
}

/** The ids a key is limited to for this kind, or null: no limit (sessions, unscoped keys, forms). */
export function scopeList(auth: Auth, kind: Kind): readonly string[] | null {
  const scope = scopeOf(auth);
  if (!scope) return null;
  return kind === 'Agent' ? scope.agentIds : kind === 'Datastore' ? scope.datastoreIds : null;
}

/** Within the caller's lists (ids of its own organization; anything else is not theirs to narrow). */
function inScope(auth: Auth, kind: Kind, id: string): boolean {
  const list = scopeList(auth, kind);
  return list === null || list.includes(id);
}

/** Of `ids` (the caller's organization's), those its key may see. */
export function visibleIds(auth: Auth, kind: Kind, ids: readonly string[]): string[] {
  return ids.filter((id) => inScope(auth, kind, id));
}

/** A read-only key cannot change anything. Throws FORBIDDEN. */
function assertWritable(auth: Auth): void {
  if (scopeOf(auth)?.readOnly) throw forbidden('This API key is read-only.');
}

/** Its organization, and within the caller's key's lists. */
function isOwnedInScope(auth: Auth, resource: Owned, kind: Kind): boolean {
  return isOwner(auth, resource) && inScope(auth, kind, resource.id);
}

/** Public to anyone, private to its organization; a scoped key sees its own organization's listed ones only. */
function canRead(auth: Auth, resource: Owned, kind: Kind): boolean {
  if (isOwner(auth, resource)) return inScope(auth, kind, resource.id);
  return resource.visibility === Visibility.public;
}

/** Read (get agent, get datastore): public to anyone, private to its organization. Throws NOT_FOUND. */
export function assertCanRead<T extends Owned>(auth: Auth, resource: T | null, kind: Kind): T {
  if (resource && canRead(auth, resource, kind)) return resource;
  throw notFound(kind);
}

/**
 * Use through an endpoint the interface documents with a bearer token (datastore query, agent
 * query, universal processor): as `assertCanRead`, but a caller without credentials is asked for
 * them (401), for an unknown id too, so the answer says nothing about what exists.
 * Throws UNAUTHENTICATED, NOT_FOUND.
 */
export function assertCanUse<T extends Owned>(auth: Auth, resource: T | null, kind: Kind): T {
  if (resource && canRead(auth, resource, kind)) return resource;
  requireMember(auth);
  throw notFound(kind);
}

/** Change: only its organization, with a key that may write. Throws UNAUTHENTICATED, FORBIDDEN, NOT_FOUND. */
export function assertCanChange<T extends Owned>(auth: Auth, resource: T | null, kind: Kind): T {
  requireMember(auth);
  if (!resource) throw notFound(kind);
  if (isOwner(auth, resource)) {
    if (!inScope(auth, kind, resource.id)) throw notFound(kind);
    assertWritable(auth);
    return resource;
  }
  if (resource.visibility === Visibility.public) {
    throw new AppError('FORBIDDEN', `This ${kind.toLowerCase()} belongs to another organization.`);
  }
  throw notFound(kind);
}

/**
 * Things that have no public side (forms, a datastore being written to by a member): its
 * organization only (within a key's lists), and to anyone else it does not exist; `write` also
 * needs a key that may write. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN.
 */
export function assertOwned<T extends Owned>(auth: Auth, resource: T | null, kind: Kind, mode: Mode = 'read'): T {
  requireMember(auth);
  if (!resource || !isOwnedInScope(auth, resource, kind)) throw notFound(kind);
  if (mode === 'write') assertWritable(auth);
  return resource;
}

/**
 * A part of a datastore (a datasource): its organization's, in a datastore within the key's
 * list; to anyone else it does not exist. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN.
 */
export function assertOwnedPart<T extends { organization: { id: string }; datastore: { id: string } }>(auth: Auth, part: T | null, what: string, mode: Mode): T {
  requireMember(auth);
  if (!part || !isOwner(auth, part) || !inScope(auth, 'Datastore', part.datastore.id)) throw notFound(what);
  if (mode === 'write') assertWritable(auth);
  return part;
}

/**
 * Creating something of a kind: any member whose key may write and is not limited to a list of
 * that kind (what it created would be outside its own list). Throws UNAUTHENTICATED, FORBIDDEN.
 */
export function requireCreate(auth: Auth, kind: Kind): Member {
  const member = requireMember(auth);
  assertWritable(auth);
  if (scopeList(auth, kind) !== null) {
    throw forbidden(`This API key is limited to some ${kind.toLowerCase()}s: it cannot create one.`);
  }
  return member;
}

/**
 * Writing documents into a datastore: its organization; also anyone when the datastore is public
 * and the operation is one the REST interface opens to the public (`publicAllowed`), except a
 * read-only key and a key whose list leaves the datastore out.
 * Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN.
 */
export function assertCanWriteDatastore<T extends Owned>(auth: Auth, datastore: T | null, opts: { publicAllowed: boolean }): T {
  if (datastore && opts.publicAllowed && datastore.visibility === Visibility.public) {
    if (isOwner(auth, datastore) && !inScope(auth, 'Datastore', datastore.id)) throw notFound('Datastore');
    assertWritable(auth);
    return datastore;
  }
  return assertOwned(auth, datastore, 'Datastore', 'write');
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
