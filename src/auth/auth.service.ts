import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Config } from '../config.ts';
import type { Em } from '../db/orm.ts';
import { AppError, badInput, unauthenticated } from '../errors.ts';
import { findOr404 } from '../db/find.ts';
import { Organization } from '../organizations/organization.entity.ts';
import { requireAdmin, requireMember } from '../access.ts';
import { TtlCache } from '../cache.ts';
import type { EventBus } from '../events/bus.ts';
import type { Limits } from '../limits/limits.ts';
import { ApiKey } from './api-key.entity.ts';
import { ANONYMOUS, type Auth } from './auth.ts';
import { checkScope, FULL_ACCESS, keyScope, type ApiKeyScopeInput, type CheckedScope } from './key-scope.ts';
import { Membership, MemberRole } from './membership.entity.ts';
import {
  DUMMY_PASSWORD_HASH,
  hashPassword,
  hashToken,
  newToken,
  randomPassword,
  tokenKind,
  verifyPassword,
} from './secrets.ts';
import { Session } from './session.entity.ts';
import { User } from './user.entity.ts';

export interface Credentials {
  /** From `Authorization: Bearer …`: must be valid when present. */
  bearer?: string | null;
  /** From the session cookie: a stale cookie is ignored (the caller is anonymous). */
  cookie?: string | null;
}

export interface SignedIn {
  token: string;
  expiresAt: Date;
  user: User;
  organization: Organization;
}

const API_KEY_TOUCH_MS = 60_000;
export const CREDENTIAL_REVOKED = 'credential_revoked';

export class AuthService {
  /**
   * Token hash -> caller (null = no such token), so a busy key costs no query per request.
   * Revocations are announced on the event bus and take effect at once in every process.
   */
  private readonly tokens = new TtlCache<string, Auth | null>(30_000);

  constructor(
    private readonly config: Config,
    private readonly bus: EventBus | null,
    /** Counts sign-in attempts. */
    private readonly limits: Limits,
  ) {}

  async init(): Promise<void> {
    await this.bus?.subscribe(CREDENTIAL_REVOKED, (id) => this.forget(id));
  }

  /** Resolves the caller. Throws UNAUTHENTICATED for a Bearer token that is unknown, revoked or expired. */
  async authenticate(em: Em, creds: Credentials): Promise<Auth> {
    if (creds.bearer) {
      const auth = await this.resolveToken(em, creds.bearer);
      if (!auth) throw unauthenticated('The API key or session token is invalid, revoked or expired.');
      return auth;
    }
    if (creds.cookie) return (await this.resolveToken(em, creds.cookie)) ?? ANONYMOUS;
    return ANONYMOUS;
  }

  private async resolveToken(em: Em, token: string): Promise<Auth | null> {
    const kind = tokenKind(token);
    if (!kind || token.length > 200) return null;
    const tokenHash = hashToken(token);
    const cached = this.tokens.get(tokenHash);
    // An entry lives no longer than its key or session (ttlMs below), so a cached one is still valid.
    if (cached !== undefined) return cached;
    const { auth, ttlMs } = await this.lookupToken(em, kind, tokenHash);
    this.tokens.set(tokenHash, auth, ttlMs);
    return auth;
  }

  private async lookupToken(em: Em, kind: 'ak' | 'st', tokenHash: string): Promise<{ auth: Auth | null; ttlMs?: number }> {
    if (kind === 'ak') {
      const now = Date.now();
      const key = await em.findOne(ApiKey, { keyHash: tokenHash, revokedAt: null, $or: [{ expiresAt: null }, { expiresAt: { $gt: new Date(now) } }] });
      if (!key) return { auth: null };
      if (!key.lastUsedAt || now - key.lastUsedAt.getTime() > API_KEY_TOUCH_MS) {
        await em.nativeUpdate(ApiKey, { id: key.id }, { lastUsedAt: new Date(now) });
      }
      return {
        auth: Object.freeze({ kind: 'apiKey', organizationId: key.organization.id, apiKeyId: key.id, ...keyScope(key) }),
        ttlMs: key.expiresAt ? key.expiresAt.getTime() - now : undefined,
      };
    }
    const session = await em.findOne(Session, { tokenHash, revokedAt: null, expiresAt: { $gt: new Date() } });
    if (!session) return { auth: null };
    const membership = await em.findOne(Membership, {
      user: session.user.id,
      organization: session.organization.id,
    });
    if (!membership) return { auth: null };
    return {
      auth: {
        kind: 'session',
        organizationId: session.organization.id,
        userId: session.user.id,
        sessionId: session.id,
        role: membership.role,
      },
      ttlMs: session.expiresAt.getTime() - Date.now(),
    };
  }

  private async revoked(em: Em, id: string): Promise<void> {
    this.forget(id); // at once here; other processes on the notification
    await this.bus?.publish(em, CREDENTIAL_REVOKED, id);
  }

  /** Drops the cached caller of an API key id or a session id. */
  private forget(id: string): void {
    this.tokens.deleteWhere((auth) => (auth?.kind === 'apiKey' ? auth.apiKeyId : auth?.kind === 'session' ? auth.sessionId : null) === id);
  }

  /**
   * Creates an organization, its owner and a session; a session the caller already had is ended.
   * Throws FORBIDDEN (sign-up closed), BAD_USER_INPUT, CONFLICT, RATE_LIMITED (per address).
   */
  async signUp(em: Em, input: { email: string; password: string; organizationName: string }, ip?: string, previous?: Auth): Promise<SignedIn> {
    if (!this.config.signupEnabled) throw new AppError('FORBIDDEN', 'Sign-up is closed on this service.');
    if (ip !== undefined) await this.limits.admitSignUp(em, ip);
    const { user, organization } = await this.createOwner(em, input);
    await this.endPrevious(em, previous);
    return this.openSession(em, user, organization);
  }

  /**
   * Always a new session (never one the client names), and the caller's previous one ended: a
   * session planted in a browser before sign-in does not live on beside the new one.
   * Throws UNAUTHENTICATED (wrong email or password), RATE_LIMITED.
   */
  async login(em: Em, input: { email: string; password: string }, ip: string, previous?: Auth): Promise<SignedIn> {
    const email = normalizeEmail(input.email);
    await this.limits.admitSignIn(em, ip, email);
    const user = await em.findOne(User, { email }, { populate: ['passwordHash'] });
    const ok = await verifyPassword(input.password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    const membership = ok && user
      ? await em.findOne(Membership, { user }, { populate: ['organization'], orderBy: { createdAt: 'asc' } })
      : null;
    if (!user || !ok || !membership) {
      throw unauthenticated('Wrong email or password.');
    }
    await this.limits.signedIn(em, ip, email);
    await this.endPrevious(em, previous);
    return this.openSession(em, user, membership.organization);
  }

  private async endPrevious(em: Em, previous: Auth | undefined): Promise<void> {
    if (previous?.kind !== 'session') return;
    await em.nativeUpdate(Session, { id: previous.sessionId, revokedAt: null }, { revokedAt: new Date() });
    await this.revoked(em, previous.sessionId);
  }

  /** Revokes the calling session. Throws UNAUTHENTICATED. */
  async logout(em: Em, auth: Auth): Promise<boolean> {
    const member = requireMember(auth);
    if (member.kind !== 'session') return false;
    await em.nativeUpdate(Session, { id: member.sessionId }, { revokedAt: new Date() });
    await this.revoked(em, member.sessionId);
    return true;
  }

  async me(em: Em, auth: Auth): Promise<{ user: User | null; organization: Organization; role: MemberRole | null; via: Auth['kind'] }> {
    const member = requireMember(auth);
    const organization = await em.findOneOrFail(Organization, member.organizationId);
    if (member.kind === 'session') {
      const user = await em.findOneOrFail(User, member.userId);
      return { user, organization, role: member.role, via: member.kind };
    }
    return { user: null, organization, role: null, via: member.kind };
  }

  /**
   * A key, optionally limited (see ApiKeyScopeInput). Throws UNAUTHENTICATED, FORBIDDEN (API keys
   * cannot mint keys; members cannot either), BAD_USER_INPUT (name, an id not of the
   * organization, expiresAt not in the future).
   */
  async createApiKey(em: Em, auth: Auth, input: { name: string } & ApiKeyScopeInput): Promise<{ apiKey: ApiKey; key: string }> {
    const admin = requireAdmin(auth);
    const scope = await checkScope(em, admin.organizationId, input);
    return this.issueApiKey(em, admin.organizationId, input.name, admin.userId, scope);
  }

  async listApiKeys(em: Em, auth: Auth): Promise<ApiKey[]> {
    const admin = requireAdmin(auth);
    return em.find(ApiKey, { organization: admin.organizationId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  }

  /** Throws UNAUTHENTICATED, FORBIDDEN, NOT_FOUND. */
  async revokeApiKey(em: Em, auth: Auth, id: string): Promise<ApiKey> {
    const admin = requireAdmin(auth);
    // Another organization's key is not found, never forbidden: its existence is not revealed.
    const key = await findOr404(em, ApiKey, id, 'API key', { organization: admin.organizationId });
    key.revokedAt ??= new Date();
    await em.flush();
    await this.revoked(em, key.id);
    return key;
  }

  /**
   * The dashboard-less bootstrap used by `npm run setup`: an organization, its owner and an
   * API key. Throws BAD_USER_INPUT, CONFLICT.
   */
  async setup(em: Em, input: { organizationName: string; email: string; password?: string }) {
    const password = input.password ?? randomPassword();
    const { user, organization } = await this.createOwner(em, { ...input, password });
    const { key } = await this.issueApiKey(em, organization.id, 'setup', user.id);
    return { organizationId: organization.id, userId: user.id, apiKey: key, password };
  }

  private async createOwner(em: Em, input: { email: string; password: string; organizationName: string }) {
    const email = normalizeEmail(input.email);
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) {
      throw badInput('email is not a valid email address.', { field: 'email' });
    }
    if (input.password.length < 8 || input.password.length > 200) {
      throw badInput('password must be 8 to 200 characters long.', { field: 'password' });
    }
    const name = input.organizationName.trim();
    if (!name || name.length > 200) {
      throw badInput('organizationName must be 1 to 200 characters long.', { field: 'organizationName' });
    }
    const passwordHash = await hashPassword(input.password);
    try {
      return await em.transactional(async (tx) => {
        const organization = tx.create(Organization, {
          name,
          storedTokenLimit: this.config.limits.storedTokens,
          crawlPageLimit: this.config.limits.crawlPages,
          monthlyQueryLimit: this.config.limits.queriesPerMonth,
        });
        const user = tx.create(User, { email, passwordHash });
        tx.create(Membership, { user, organization, role: MemberRole.owner });
        await tx.flush();
        return { user, organization };
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) {
        throw new AppError('CONFLICT', 'An account with this email already exists.', { field: 'email' });
      }
      throw err;
    }
  }

  private async issueApiKey(em: Em, organizationId: string, name: string, userId?: string, scope: CheckedScope = FULL_ACCESS) {
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 100) throw badInput('name must be 1 to 100 characters long.', { field: 'name' });
    const key = newToken('ak');
    const apiKey = em.create(ApiKey, {
      organization: organizationId,
      createdBy: userId ?? null,
      name: trimmed,
      prefix: key.slice(0, 10),
      keyHash: hashToken(key),
      ...scope,
    });
    await em.flush();
    return { apiKey, key };
  }

  private async openSession(em: Em, user: User, organization: Organization): Promise<SignedIn> {
    const token = newToken('st');
    const expiresAt = new Date(Date.now() + this.config.sessionTtlDays * 86_400_000);
    em.create(Session, { user, organization, tokenHash: hashToken(token), expiresAt });
    await em.flush();
    return { token, expiresAt, user, organization };
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
