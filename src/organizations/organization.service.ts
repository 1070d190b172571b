import { requireUser } from '../access.ts';
import type { Auth } from '../auth/auth.ts';
import { Membership, MemberRole } from '../auth/membership.entity.ts';
import type { Config } from '../config.ts';
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { badInput, forbidden } from '../errors.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { storedTokens } from '../limits/content.ts';
import type { Limits } from '../limits/limits.ts';
import { currentPeriod } from '../limits/queries.ts';
import { Organization } from './organization.entity.ts';

export interface OrganizationUsage {
  /** YYYY-MM (UTC): the month `queriesThisMonth` counts. */
  period: string;
  queriesThisMonth: number;
  storedTokens: number;
}

export interface OrganizationMember {
  id: string;
  email: string;
  role: MemberRole;
  joinedAt: Date;
}

/** What the console shows of the caller's organization: its name, members and usage beside its plan limits. */
export class OrganizationService {
  constructor(
    private readonly config: Pick<Config, 'signupEnabled'>,
    private readonly limits: Limits,
  ) {}

  /** What a signed-out page may know of the service. Never throws. */
  serviceInfo(): { signupEnabled: boolean } {
    return { signupEnabled: this.config.signupEnabled };
  }

  /**
   * The organization's usage, counted where the limits count it: answers this month
   * (organization_usage, less this process's query reserved ahead) and the tokens its
   * datasources store. Null for anyone but its members: a payload that selects every field
   * (signUp's, before its session is in use) reads without an error and learns nothing.
   */
  async usage(em: Em, auth: Auth, organization: Pick<Organization, 'id'>): Promise<OrganizationUsage | null> {
    if (auth.kind === 'anonymous' || auth.organizationId !== organization.id) return null;
    const period = currentPeriod();
    const [rows, tokens, ahead] = await Promise.all([
      rawQuery<{ queries: string | number }>(em, 'select queries from organization_usage where organization_id = $1 and period = $2', [organization.id, period]),
      storedTokens(em, organization.id),
      this.limits.queries.heldAhead(organization.id, period),
    ]);
    return { period, queriesThisMonth: Math.max(Number(rows[0]?.queries ?? 0) - ahead, 0), storedTokens: tokens.used };
  }

  /** Members, oldest first (the owner who signed up comes first). Throws UNAUTHENTICATED, FORBIDDEN (API keys), BAD_USER_INPUT. */
  async members(em: Em, auth: Auth, first: number, after?: string | null): Promise<Page<OrganizationMember>> {
    const user = requireUser(auth);
    const page = pageArgs(first, after);
    const rows = await em.find(
      Membership,
      { organization: user.organizationId, ...(page.after ? { id: { $gt: page.after } } : {}) },
      { populate: ['user'], orderBy: { id: 'asc' }, limit: page.first + 1 },
    );
    return toPage(
      rows.map((m) => ({ id: m.id, email: m.user.email, role: m.role, joinedAt: m.createdAt })),
      page.first,
    );
  }

  /** Renames the caller's organization. Throws UNAUTHENTICATED, FORBIDDEN (members, API keys), BAD_USER_INPUT. */
  async rename(em: Em, auth: Auth, name: string): Promise<Organization> {
    const user = requireUser(auth);
    if (user.role !== MemberRole.owner && user.role !== MemberRole.admin) {
      throw forbidden('Only owners and admins can rename the organization.');
    }
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 200) throw badInput('name must be 1 to 200 characters long.', { field: 'name' });
    const organization = await em.findOneOrFail(Organization, user.organizationId);
    organization.name = trimmed;
    await em.flush();
    return organization;
  }
}
