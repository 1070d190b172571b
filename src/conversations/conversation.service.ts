/**
 * Conversations and their messages: reading them (the conversation id is the credential), and
 * the parts of a turn every feature shares (opening, history, appending). A new conversation is
 * written only with its first messages, in their transaction, so a refused or failed turn
 * leaves no empty conversation.
 */
import { randomUUID } from 'node:crypto';
import type { FilterQuery } from '@mikro-orm/core';
import type { Em } from '../db/orm.ts';
import { findOr404 } from '../db/find.ts';
import { rawQuery } from '../db/raw.ts';
import { newId } from '../ids.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { Conversation } from './conversation.entity.ts';
import { Message, MessageFrom } from './message.entity.ts';

/** Who a conversation is with: an agent, or a form. */
export type ConversationOwner = { organizationId: string; channel: string } & ({ agentId: string; formId?: undefined } | { formId: string; agentId?: undefined });

/** The conversation of a turn; `isNew` until the first `append` has written it. */
export interface ConversationRef {
  id: string;
  visitorId: string;
  isNew: boolean;
  owner: ConversationOwner;
}

export interface NewMessage {
  from: MessageFrom;
  text: string;
  sources?: Record<string, unknown>[];
  usage?: Record<string, unknown> | null;
  metadata?: Record<string, unknown>;
}

export class ConversationService {
  /** The conversation id is the credential: whoever holds it may read. Throws NOT_FOUND. */
  async get(em: Em, id: string): Promise<Conversation> {
    return findOr404(em, Conversation, id, 'Conversation');
  }

  /** Newest first; `after` = the id of the last message already received. Throws BAD_USER_INPUT. */
  async messages(em: Em, conversation: Conversation, first: number, after?: string | null): Promise<Page<Message>> {
    const page = pageArgs(first, after);
    const rows = await em.find(
      Message,
      { conversation: conversation.id, ...(page.after ? { id: { $lt: page.after } } : {}) },
      { orderBy: { id: 'desc' }, limit: page.first + 1 },
    );
    return toPage(rows, page.first);
  }

  /**
   * The conversation a turn continues (it must be the owner's), or a new one that nothing is
   * written for until the turn's first `append`. Throws NOT_FOUND.
   */
  async open(em: Em, owner: ConversationOwner, conversationId: string | null | undefined, visitorId: string): Promise<ConversationRef> {
    if (conversationId) {
      const where: FilterQuery<Conversation> = owner.agentId ? { agent: owner.agentId } : { formId: owner.formId };
      const found = await findOr404(em, Conversation, conversationId, 'Conversation', where);
      return { id: found.id, visitorId: found.visitorId, isNew: false, owner };
    }
    // The id is the visitor's access token: random, as Conversation's own default.
    return { id: randomUUID(), visitorId, isNew: true, owner };
  }

  /** The last `limit` messages, oldest first; a new conversation has none (and costs no query). */
  async history(em: Em, conversation: ConversationRef, limit: number): Promise<{ from: MessageFrom; text: string }[]> {
    if (conversation.isNew) return [];
    const recent = await em.find(Message, { conversation: conversation.id }, { orderBy: { id: 'desc' }, limit, fields: ['from', 'text'] });
    return recent.reverse().map((m) => ({ from: m.from, text: m.text }));
  }

  /**
   * Stores the messages, with the conversation itself when it is new, atomically; `alongside`
   * writes the feature's own rows in the same transaction (it may throw to undo it all). Returns
   * the stored messages' ids, in order.
   *
   * Without `alongside` (every answer of an agent) it is one statement: the conversation and the
   * messages inserted together (APPEND_SQL), one round trip where the ORM's transaction took four
   * (begin, two inserts, commit) and its unit of work.
   */
  async append(em: Em, conversation: ConversationRef, messages: NewMessage[], alongside?: (tx: Em) => Promise<void>): Promise<{ id: string }[]> {
    const now = new Date();
    // Each message as stored (Message's defaults filled in), for either path below.
    const rows = messages.map((m) => ({ id: newId(), from: m.from, text: m.text, sources: m.sources ?? [], usage: m.usage ?? null, metadata: m.metadata ?? {} }));
    if (alongside) {
      await em.fork().transactional(async (tx) => {
        if (conversation.isNew) tx.create(Conversation, { ...this.conversationRow(conversation), createdAt: now });
        // The conversation first: the feature's rows may refer to it.
        await tx.flush();
        await alongside(tx);
        for (const m of rows) tx.create(Message, { ...m, conversation: conversation.id, createdAt: now });
        await tx.flush();
      });
    } else {
      const c = this.conversationRow(conversation);
      await rawQuery(em.fork(), APPEND_SQL, [
        conversation.isNew,
        c.id,
        c.organization,
        c.agent,
        c.formId,
        c.visitorId,
        c.channel,
        now,
        rows.map((m) => m.id),
        rows.map((m) => m.from),
        rows.map((m) => m.text),
        rows.map((m) => JSON.stringify(m.sources)),
        rows.map((m) => (m.usage === null ? null : JSON.stringify(m.usage))),
        rows.map((m) => JSON.stringify(m.metadata)),
      ]);
    }
    conversation.isNew = false;
    return rows.map((m) => ({ id: m.id }));
  }

  private conversationRow(conversation: ConversationRef) {
    const { owner } = conversation;
    return { id: conversation.id, organization: owner.organizationId, agent: owner.agentId ?? null, formId: owner.formId ?? null, visitorId: conversation.visitorId, channel: owner.channel };
  }
}

/**
 * A turn's messages, and its conversation when $1 says it is new, in one statement: the
 * messages' foreign key is checked at the statement's end, when the conversation is in. The
 * columns are those of Conversation and Message (migrations 20261122020000 on).
 */
const APPEND_SQL = `with conversation as (
  insert into conversations (id, organization_id, agent_id, form_id, visitor_id, channel, created_at)
  select $2::uuid, $3::uuid, $4::uuid, $5::uuid, $6::text, $7::text, $8::timestamptz where $1::boolean
)
insert into messages (id, conversation_id, "from", text, sources, usage, metadata, created_at)
select m.id, $2::uuid, m."from", m.text, m.sources, m.usage, m.metadata, $8::timestamptz
from unnest($9::uuid[], $10::text[], $11::text[], $12::jsonb[], $13::jsonb[], $14::jsonb[]) with ordinality as m(id, "from", text, sources, usage, metadata, n)
order by m.n`;
