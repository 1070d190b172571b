import type { Em } from '../db/orm.ts';
import { notFound } from '../errors.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { isId } from '../ids.ts';
import { Conversation } from './conversation.entity.ts';
import { Message } from './message.entity.ts';

export class ConversationService {
  /** The conversation id is the credential: whoever holds it may read. Throws NOT_FOUND. */
  async get(em: Em, id: string): Promise<Conversation> {
    const conversation = isId(id) ? await em.findOne(Conversation, id) : null;
    if (!conversation) throw notFound('Conversation');
    return conversation;
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
}
