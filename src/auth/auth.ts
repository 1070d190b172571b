import type { MemberRole } from './membership.entity.ts';

/**
 * What an API key may reach, beyond its organization. A list that is null restricts nothing of
 * its kind; a list (even an empty one) is all the key sees of that kind. Absent = full access.
 */
export interface KeyScope {
  agentIds: readonly string[] | null;
  datastoreIds: readonly string[] | null;
  readOnly: boolean;
}

/** Who is calling. Resolved once per request from the Bearer token or the session cookie. */
export type Auth =
  | { kind: 'anonymous' }
  | { kind: 'apiKey'; organizationId: string; apiKeyId: string; scope?: KeyScope }
  | { kind: 'session'; organizationId: string; userId: string; sessionId: string; role: MemberRole };

export const ANONYMOUS: Auth = Object.freeze({ kind: 'anonymous' });

export type Member = Exclude<Auth, { kind: 'anonymous' }>;
