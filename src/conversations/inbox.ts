/**
 * The conversations inbox: an organization's conversations newest first, filtered by agent,
 * visitor and date, with each one's message count and last activity. Kept apart from
 * ConversationService (which serves turns, where the conversation id is the credential): a list
 * is for members only, within their key's agent list.
 */
import type { FilterQuery } from '@mikro-orm/core';
import { requireMember, scopeList } from '../access.ts';
import type { Auth } from '../auth/auth.ts';
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';
import { badInput } from '../errors.ts';
import { pageArgs, type Page } from '../graphql/pagination.ts';
import { isId } from '../ids.ts';
import { Conversation } from './conversation.entity.ts';

export interface ConversationFilterValues {
  agentId?: string | null;
  visitorId?: string | null;
  from?: Date | null;
  to?: Date | null;
}

export interface ConversationStats {
  messageCount: number;
  /** The newest message's time; the conversation's own when it has none. */
  updatedAt: Date;
}

/**
 * Conversation ids are random (they are the visitor's credential), so they do not sort by time:
 * the cursor is the last row's creation time and id, opaque to clients.
 */
function encodeCursor(c: Conversation): string {
  return Buffer.from(`${c.createdAt.toISOString()}|${c.id}`).toString('base64url');
}

function decodeCursor(after: string): { createdAt: Date; id: string } {
  const [time, id, ...rest] = Buffer.from(after, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(time ?? '');
  if (rest.length || !id || !isId(id) || Number.isNaN(createdAt.getTime()) || encodeCursor({ createdAt, id } as Conversation) !== after) {
    throw badInput('after is not a cursor returned by this API.', { field: 'after' });
  }
  return { createdAt, id };
}

/** Stats read with a page, so a listing costs one extra query rather than one per conversation. */
const statsOf = new WeakMap<Conversation, ConversationStats>();

/**
 * The caller's organization's conversations, newest first. A key limited to some agents sees
 * only theirs (and no form's). Throws UNAUTHENTICATED, BAD_USER_INPUT.
 */
export async function listConversations(em: Em, auth: Auth, filter: ConversationFilterValues, first: number, after?: string | null): Promise<Page<Conversation>> {
  const member = requireMember(auth);
  pageArgs(first); // its rule for `first`; the cursor here is not an id (below)
  const cursor = after != null ? decodeCursor(after) : null;
  if (filter.agentId != null && !isId(filter.agentId)) throw badInput('filter.agentId is not an agent id.', { field: 'filter.agentId' });
  if (filter.from && filter.to && filter.from > filter.to) throw badInput('filter.from must not be after filter.to.', { field: 'filter.from' });

  const listed = scopeList(auth, 'Agent');
  let agent: string | { $in: string[] } | undefined;
  if (filter.agentId) {
    if (listed && !listed.includes(filter.agentId)) return { nodes: [], pageInfo: { endCursor: null, hasNextPage: false } };
    agent = filter.agentId;
  } else if (listed) {
    agent = { $in: [...listed] };
  }
  const createdAt = { ...(filter.from ? { $gte: filter.from } : {}), ...(filter.to ? { $lte: filter.to } : {}) };
  const where: FilterQuery<Conversation> = {
    organization: member.organizationId,
    ...(agent !== undefined ? { agent } : {}),
    ...(filter.visitorId != null ? { visitorId: filter.visitorId } : {}),
    ...(Object.keys(createdAt).length ? { createdAt } : {}),
    ...(cursor ? { $or: [{ createdAt: { $lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { $lt: cursor.id } }] } : {}),
  };
  const rows = await em.find(Conversation, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: first + 1 });
  const nodes = rows.slice(0, first);
  if (nodes.length) {
    const stats = await rawQuery<{ conversation_id: string; count: number | string; last: Date | string | null }>(
      em,
      'select conversation_id, count(*) as count, max(created_at) as last from messages where conversation_id = any($1::uuid[]) group by conversation_id',
      [nodes.map((c) => c.id)],
    );
    const byId = new Map(stats.map((s) => [s.conversation_id, s]));
    for (const c of nodes) {
      const s = byId.get(c.id);
      statsOf.set(c, { messageCount: Number(s?.count ?? 0), updatedAt: s?.last ? new Date(s.last) : c.createdAt });
    }
  }
  return { nodes, pageInfo: { endCursor: nodes.length ? encodeCursor(nodes.at(-1)!) : null, hasNextPage: rows.length > first } };
}

/** A conversation's message count and last activity: from its listing, else read now. */
export async function conversationStats(em: Em, conversation: Conversation): Promise<ConversationStats> {
  const known = statsOf.get(conversation);
  if (known) return known;
  const [s] = await rawQuery<{ count: number | string; last: Date | string | null }>(em, 'select count(*) as count, max(created_at) as last from messages where conversation_id = $1', [conversation.id]);
  const stats = { messageCount: Number(s?.count ?? 0), updatedAt: s?.last ? new Date(s.last) : conversation.createdAt };
  statsOf.set(conversation, stats);
  return stats;
}
