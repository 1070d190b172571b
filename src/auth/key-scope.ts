/**
 * What a new API key is limited to, checked before it is issued, and the scope a key's row gives
 * the caller (src/access.ts applies it). A key's lists are fixed at creation: a list is an
 * allow-list, so agents and datastores created later stay outside it, and an id whose thing is
 * deleted stays in it matching nothing (ids are never reused). A list never widens by emptying.
 */
import type { Em } from '../db/orm.ts';
import { Agent } from '../agents/agent.entity.ts';
import { Datastore } from '../datastores/datastore.entity.ts';
import { badInput } from '../errors.ts';
import { isId } from '../ids.ts';
import type { ApiKey } from './api-key.entity.ts';
import type { KeyScope } from './auth.ts';

export const SCOPE_LIST_MAX = 100;

export interface ApiKeyScopeInput {
  /** Omitted or null: every agent of the organization. */
  agentIds?: string[] | null;
  /** Omitted or null: every datastore of the organization. */
  datastoreIds?: string[] | null;
  readOnly?: boolean | null;
  /** Omitted or null: never expires. */
  expiresAt?: Date | null;
}

export interface CheckedScope {
  agentIds: string[] | null;
  datastoreIds: string[] | null;
  readOnly: boolean;
  expiresAt: Date | null;
}

export const FULL_ACCESS: CheckedScope = Object.freeze({ agentIds: null, datastoreIds: null, readOnly: false, expiresAt: null });

/** Throws BAD_USER_INPUT naming the field: an id that is not the organization's, expiresAt not in the future. */
export async function checkScope(em: Em, organizationId: string, input: ApiKeyScopeInput, now = new Date()): Promise<CheckedScope> {
  if (input.expiresAt != null && !(input.expiresAt.getTime() > now.getTime())) {
    throw badInput('expiresAt must lie in the future.', { field: 'expiresAt' });
  }
  return {
    agentIds: await ownIds(em, Agent, 'agentIds', 'agent', organizationId, input.agentIds),
    datastoreIds: await ownIds(em, Datastore, 'datastoreIds', 'datastore', organizationId, input.datastoreIds),
    readOnly: input.readOnly ?? false,
    expiresAt: input.expiresAt ?? null,
  };
}

/**
 * The list, without repeats, when every id is one of the organization's. Another organization's
 * id is reported exactly as an id that exists nowhere: the answer reveals nothing.
 */
async function ownIds(em: Em, entity: typeof Agent | typeof Datastore, field: string, what: string, organizationId: string, ids: string[] | null | undefined): Promise<string[] | null> {
  if (ids == null) return null;
  const unique = [...new Set(ids)];
  if (unique.length > SCOPE_LIST_MAX) throw badInput(`${field} may name at most ${SCOPE_LIST_MAX} ids.`, { field });
  const valid = unique.filter(isId);
  const found = valid.length ? await em.find(entity as typeof Agent, { id: { $in: valid }, organization: organizationId }, { fields: ['id'] }) : [];
  const missing = unique.find((id) => !found.some((row) => row.id === id));
  if (missing !== undefined) throw badInput(`${field}: ${JSON.stringify(missing)} is not ${what === 'agent' ? 'an' : 'a'} ${what} of your organization.`, { field, id: missing });
  return unique;
}

/** The caller's scope from its key's row; a key without limits carries none (full access). */
export function keyScope(key: Pick<ApiKey, 'agentIds' | 'datastoreIds' | 'readOnly'>): { scope?: KeyScope } {
  const agentIds = key.agentIds ?? null;
  const datastoreIds = key.datastoreIds ?? null;
  if (agentIds === null && datastoreIds === null && !key.readOnly) return {};
  return { scope: Object.freeze({ agentIds: agentIds && Object.freeze([...agentIds]), datastoreIds: datastoreIds && Object.freeze([...datastoreIds]), readOnly: key.readOnly }) };
}
