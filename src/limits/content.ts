/**
 * Limits on what an organization stores and crawls: stored tokens and pages per web site.
 * Read from the organization's row (its plan), counted from its datasources.
 */
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { AppError } from '../errors.ts';

export interface TokenAllowance {
  used: number;
  limit: number;
}

/** The organization's stored-token limit and the tokens its datasources store (all but `exceptDatasourceId`), in one query. */
async function tokenAllowance(em: Em, organizationId: string, exceptDatasourceId?: string): Promise<TokenAllowance> {
  const rows = await rawQuery<{ limit: string | number; used: string | number }>(
    em,
    `select o.stored_token_limit as "limit",
            (select coalesce(sum(d.token_count), 0) from datasources d where d.organization_id = o.id${exceptDatasourceId ? ' and d.id <> $2' : ''}) as used
     from organizations o where o.id = $1`,
    exceptDatasourceId ? [organizationId, exceptDatasourceId] : [organizationId],
  );
  if (!rows[0]) throw new Error(`Organization ${organizationId} not found`);
  return { used: Number(rows[0].used), limit: Number(rows[0].limit) };
}

/** Throws PAYMENT_REQUIRED while the organization's stored tokens are at or above its limit. */
export async function assertStoredTokensLeft(em: Em, organizationId: string): Promise<void> {
  const { used, limit } = await tokenAllowance(em, organizationId);
  if (used >= limit) {
    throw new AppError('PAYMENT_REQUIRED', `The organization stores ${used} tokens, its limit is ${limit}: delete datasources or raise the limit.`, { used, limit });
  }
}

/** Whether `tokens` more fit beside what the organization's other datasources store. */
export async function tokensFit(em: Em, organizationId: string, datasourceId: string, tokens: number): Promise<{ fits: boolean; used: number; limit: number }> {
  const { used, limit } = await tokenAllowance(em, organizationId, datasourceId);
  return { fits: used + tokens <= limit, used, limit };
}

/** Most pages one web_site datasource of the organization may crawl. */
export async function crawlPageLimit(em: Em, organizationId: string): Promise<number> {
  const rows = await rawQuery<{ limit: number }>(em, 'select crawl_page_limit as "limit" from organizations where id = $1', [organizationId]);
  if (!rows[0]) throw new Error(`Organization ${organizationId} not found`);
  return Number(rows[0].limit);
}

/** Tokens the organization's datasources store now, and its limit: the usage read-out. */
export async function storedTokens(em: Em, organizationId: string): Promise<TokenAllowance> {
  return tokenAllowance(em, organizationId);
}
