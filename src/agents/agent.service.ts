import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Auth } from '../auth/auth.ts';
import { assertCanChange, assertCanRead, assertCanUse, requireCreate, requireMember, scopeList, visibleIds } from '../access.ts';
import type { Em } from '../db/orm.ts';
import type { DatastoreService } from '../datastores/datastore.service.ts';
import { AppError } from '../errors.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { findById } from '../db/find.ts';
import { SharedLoads, TtlCache } from '../cache.ts';
import type { EventBus } from '../events/bus.ts';
import { Agent } from './agent.entity.ts';
import type { Datastore } from '../datastores/datastore.entity.ts';
import type { CreateAgentInput, UpdateAgentInput } from './agent.inputs.ts';
import { assertOriginAllowed, normalizeAllowedOrigins } from '../origins.ts';

export const AGENT_CHANGED = 'agent_changed';

export class AgentService {
  /**
   * Read snapshots of agents by id and by "@handle". Public agents are read by every chat
   * widget on every page view; changes are announced on the event bus to every process.
   */
  private readonly cache = new TtlCache<string, Agent>(60_000);
  /** The ids of each agent's datastores, read before every answer; forgotten with the agent. */
  private readonly linked = new TtlCache<string, readonly string[]>(60_000);
  private readonly loadingAgents = new SharedLoads<string, Agent | null>();
  private readonly loadingLinks = new SharedLoads<string, readonly string[]>();

  constructor(
    private readonly datastores: DatastoreService,
    private readonly bus: EventBus,
  ) {}

  async init(): Promise<void> {
    await this.bus.subscribe(AGENT_CHANGED, (id) => this.forget(id));
  }

  /**
   * By id or "@handle", for reading. With the `Origin` of a browser's request, also refuses a page
   * the agent's allowedOrigins leave out (src/origins.ts).
   * Throws NOT_FOUND (unknown, or private to another organization), FORBIDDEN (origin).
   */
  async get(em: Em, auth: Auth, idOrHandle: string, origin?: string): Promise<Agent> {
    const agent = assertCanRead(auth, await this.cached(em, idOrHandle), 'Agent');
    assertOriginAllowed(auth, origin, agent, 'Agent');
    return agent;
  }

  /**
   * By id or "@handle", to ask it something (query, universal processor): as `get`, but a caller
   * without credentials is asked for them. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (origin).
   */
  async getToUse(em: Em, auth: Auth, idOrHandle: string, origin?: string): Promise<Agent> {
    const agent = assertCanUse(auth, await this.cached(em, idOrHandle), 'Agent');
    assertOriginAllowed(auth, origin, agent, 'Agent');
    return agent;
  }

  private async cached(em: Em, idOrHandle: string): Promise<Agent | null> {
    const key = idOrHandle.startsWith('@') ? idOrHandle.toLowerCase() : idOrHandle;
    return (
      this.cache.get(key) ??
      this.loadingAgents.run(key, async () => {
        const found = await this.find(em, idOrHandle);
        if (!found) return null;
        const agent = snapshot(found);
        this.cache.set(agent.id, agent);
        if (agent.handle) this.cache.set(`@${agent.handle}`, agent);
        return agent;
      })
    );
  }

  /** The caller's organization's agents, newest first. Throws UNAUTHENTICATED, BAD_USER_INPUT. */
  async list(em: Em, auth: Auth, first: number, after?: string | null): Promise<Page<Agent>> {
    const member = requireMember(auth);
    const page = pageArgs(first, after);
    const listed = scopeList(auth, 'Agent');
    const id = { ...(listed ? { $in: [...listed] } : {}), ...(page.after ? { $lt: page.after } : {}) };
    const rows = await em.find(
      Agent,
      { organization: member.organizationId, ...(listed || page.after ? { id } : {}) },
      { orderBy: { id: 'desc' }, limit: page.first + 1 },
    );
    return toPage(rows, page.first);
  }

  /** Throws UNAUTHENTICATED, FORBIDDEN (a key limited to some agents, or read-only), NOT_FOUND (a datastore), CONFLICT (handle taken), BAD_USER_INPUT (allowedOrigins). */
  async create(em: Em, auth: Auth, input: CreateAgentInput): Promise<Agent> {
    const member = requireCreate(auth, 'Agent');
    const datastores = await this.datastores.requireOwned(em, member.organizationId, visibleOnly(auth, input.datastoreIds ?? []));
    const { datastoreIds: _ids, handle, allowedOrigins, ...fields } = input;
    const agent = em.create(Agent, {
      ...fields,
      organization: member.organizationId,
      handle: normalizeHandle(handle),
      allowedOrigins: normalizeAllowedOrigins(allowedOrigins),
    });
    agent.datastores.set(datastores);
    await flushUnique(em);
    return agent;
  }

  /** Only the fields given change. Throws UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CONFLICT, BAD_USER_INPUT (allowedOrigins). */
  async update(em: Em, auth: Auth, idOrHandle: string, input: UpdateAgentInput): Promise<Agent> {
    const agent = assertCanChange(auth, await this.find(em, idOrHandle), 'Agent');
    const { datastoreIds, handle, allowedOrigins, ...fields } = input;
    // Checked before anything changes: a bad origin leaves the agent as it was.
    if (allowedOrigins !== undefined) agent.allowedOrigins = normalizeAllowedOrigins(allowedOrigins);
    for (const [key, value] of Object.entries(fields)) {
      // Omitted fields keep their value; only the deprecated nullable ones may be cleared.
      if (value !== undefined && (value !== null || key === 'promptType' || key === 'promptTemplate')) {
        (agent as unknown as Record<string, unknown>)[key] = value;
      }
    }
    if (handle !== undefined) agent.handle = normalizeHandle(handle);
    if (datastoreIds) {
      const linked = await this.datastores.requireOwned(em, agent.organization.id, visibleOnly(auth, datastoreIds));
      // Loaded first: set() on a collection never read only adds, and a link to drop would stay.
      await agent.datastores.init();
      agent.datastores.set(linked);
    }
    await flushUnique(em);
    await this.changed(em, agent.id);
    return agent;
  }

  /** Throws UNAUTHENTICATED, FORBIDDEN, NOT_FOUND. */
  async delete(em: Em, auth: Auth, idOrHandle: string): Promise<Agent> {
    const agent = assertCanChange(auth, await this.find(em, idOrHandle), 'Agent');
    const record = snapshot(agent);
    await em.remove(agent).flush();
    await this.changed(em, agent.id);
    return record;
  }

  /**
   * The datastores an agent answers from, as cached snapshots (DatastoreService.ownedForQuery).
   * The link ids are cached with the agent: a changed link is an agent update (announced on the
   * bus); a datastore deleted since is left out by the snapshot read.
   */
  async linkedDatastores(em: Em, agent: Agent): Promise<Datastore[]> {
    const ids =
      this.linked.get(agent.id) ??
      (await this.loadingLinks.run(agent.id, async () => {
        const read = Object.freeze(await this.datastoreIds(em, agent));
        this.linked.set(agent.id, read);
        return read;
      }));
    // Linked datastores belong to the agent's organization by construction; checked again.
    return ids.length ? this.datastores.ownedForQuery(em, agent.organization.id, ids) : [];
  }

  /** Works for snapshots too: reads the link table, not the entity's collection. */
  async datastoreIds(em: Em, agent: Agent): Promise<string[]> {
    const rows: { datastore_id: string }[] = await em
      .getConnection()
      .execute('select datastore_id from agent_datastores where agent_id = ? order by datastore_id', [agent.id]);
    return rows.map((r) => r.datastore_id);
  }

  private async changed(em: Em, id: string): Promise<void> {
    this.forget(id); // at once here; other processes on the notification
    await this.bus.publish(em, AGENT_CHANGED, id);
  }

  private forget(id: string): void {
    this.cache.deleteWhere((agent) => agent.id === id);
    this.linked.delete(id);
  }

  private async find(em: Em, idOrHandle: string): Promise<Agent | null> {
    if (idOrHandle.startsWith('@')) return em.findOne(Agent, { handle: idOrHandle.slice(1).toLowerCase() });
    return findById(em, Agent, idOrHandle);
  }
}

/**
 * Datastore ids to link, as the caller may name them: one outside its key's list is reported as
 * unknown, as `requireOwned` reports another organization's. Throws NOT_FOUND.
 */
function visibleOnly(auth: Auth, ids: string[]): string[] {
  const visible = visibleIds(auth, 'Datastore', ids);
  const hidden = ids.find((id) => !visible.includes(id));
  if (hidden) throw new AppError('NOT_FOUND', `Datastore ${hidden} not found.`, { field: 'datastoreIds', id: hidden });
  return ids;
}

/** A detached, read-only copy: what the cache holds and what GraphQL reads. */
function snapshot(agent: Agent): Agent {
  return Object.freeze({
    id: agent.id,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
    organization: { id: agent.organization.id },
    handle: agent.handle ?? null,
    name: agent.name,
    description: agent.description,
    modelName: agent.modelName,
    temperature: agent.temperature,
    visibility: agent.visibility,
    systemPrompt: agent.systemPrompt,
    userPrompt: agent.userPrompt,
    promptType: agent.promptType ?? null,
    promptTemplate: agent.promptTemplate ?? null,
    allowedOrigins: Object.freeze([...agent.allowedOrigins]),
  }) as unknown as Agent;
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
