import type { MemberRole } from './membership.entity.ts';

/** Who is calling. Resolved once per request from the Bearer token or the session cookie. */
export type Auth =
  | { kind: 'anonymous' }
  | { kind: 'apiKey'; organizationId: string; apiKeyId: string }
  | { kind: 'session'; organizationId: string; userId: string; sessionId: string; role: MemberRole };

export const ANONYMOUS: Auth = Object.freeze({ kind: 'anonymous' });

export type Member = Exclude<Auth, { kind: 'anonymous' }>;
