import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Auth } from '../auth/auth.ts';
import { assertCanChange, assertCanRead, requireMember } from '../access.ts';
import type { Em } from '../db/orm.ts';
import type { DatastoreService } from '../datastores/datastore.service.ts';
import { AppError } from '../errors.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { isId } from '../ids.ts';
import { Agent } from './agent.entity.ts';
import type { CreateAgentInput, UpdateAgentInput } from './agent.inputs.ts';

export class AgentService {
  constructor(private readonly datastores: DatastoreService) {}

  /** By id or "@handle". Throws NOT_FOUND (unknown, or private to another organization). */
  async get(em: Em, auth: Auth, idOrHandle: string): Promise<Agent> {
    return assertCanRead(auth, await this.find(em, idOrHandle), 'Agent');
  }

  /** The caller's organization's agents, newest first. Throws UNAUTHENTICATED, BAD_USER_INPUT. */
  async list(em: Em, auth: Auth, first: number, after?: string | null): Promise<Page<Agent>> {
    const member = requireMember(auth);
    const page = pageArgs(first, after);
    const rows = await em.find(
      Agent,
      { organization: member.organizationId, ...(page.after ? { id: { $lt: page.after } } : {}) },
      { orderBy: { id: 'desc' }, limit: page.first + 1 },
    );
    return toPage(rows, page.first);
  }

  /** Throws UNAUTHENTICATED, NOT_FOUND (a datastore), CONFLICT (handle taken). */
  async create(em: Em, auth: Auth, input: CreateAgentInput): Promise<Agent> {
    const member = requireMember(auth);
    const datastores = await this.datastores.requireOwned(em, member.organizationId, input.datastoreIds ?? []);
    const { datastoreIds: _ids, handle, ...fields } = input;
    const agent = em.create(Agent, {
      ...fields,
      organization: member.organizationId,
      handle: normalizeHandle(handle),
    });
    agent.datastores.set(datastores);
    await flushUnique(em);
    return agent;
  }

  /** Only the fields given change. Throws UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CONFLICT. */
  async update(em: Em, auth: Auth, idOrHandle: string, input: UpdateAgentInput): Promise<Agent> {
    const agent = assertCanChange(auth, await this.find(em, idOrHandle), 'Agent');
    const { datastoreIds, handle, ...fields } = input;
    for (const [key, value] of Object.entries(fields)) {
      // Omitted fields keep their value; only the deprecated nullable ones may be cleared.
      if (value !== undefined && (value !== null || key === 'promptType' || key === 'promptTemplate')) {
        (agent as unknown as Record<string, unknown>)[key] = value;
      }
    }
    if (handle !== undefined) agent.handle = normalizeHandle(handle);
    if (datastoreIds) {
      agent.datastores.set(await this.datastores.requireOwned(em, agent.organization.id, datastoreIds));
    }
    await flushUnique(em);
    return agent;
  }

  /** Throws UNAUTHENTICATED, FORBIDDEN, NOT_FOUND. */
  async delete(em: Em, auth: Auth, idOrHandle: string): Promise<Agent> {
    const agent = assertCanChange(auth, await this.find(em, idOrHandle), 'Agent');
    await em.remove(agent).flush();
    return agent;
  }

  async datastoreIds(em: Em, agent: Agent): Promise<string[]> {
    await em.populate(agent, ['datastores']);
    return agent.datastores.getItems().map((d) => d.id);
  }

  private async find(em: Em, idOrHandle: string): Promise<Agent | null> {
    if (idOrHandle.startsWith('@')) return em.findOne(Agent, { handle: idOrHandle.slice(1).toLowerCase() });
    return isId(idOrHandle) ? em.findOne(Agent, idOrHandle) : null;
  }
}

function normalizeHandle(handle: string | null | undefined): string | null {
  return handle ? handle.replace(/^@/, '').toLowerCase() : null;
}

async function flushUnique(em: Em): Promise<void> {
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      throw new AppError('CONFLICT', 'This handle is already taken.', { field: 'handle' });
    }
    throw err;
  }
}
