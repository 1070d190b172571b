/**
 * An agent answers: retrieve from its datastores, build the prompt, call the model (or the
 * extractive answerer), persist both messages. Every check that can refuse a request runs
 * before the answer stream is handed out, so a stream never starts just to fail.
 */
import { randomUUID } from 'node:crypto';
import type { Agent } from '../agents/agent.entity.ts';
import type { AgentService } from '../agents/agent.service.ts';
import type { Auth } from '../auth/auth.ts';
import type { Config } from '../config.ts';
import { Conversation } from '../conversations/conversation.entity.ts';
import { Message, MessageFrom } from '../conversations/message.entity.ts';
import type { Em } from '../db/orm.ts';
import { AppError, notFound } from '../errors.ts';
import { isId, newId } from '../ids.ts';
import { ChatError, type ChatModel, type Usage } from '../providers/chat.ts';
import { EmbeddingError } from '../providers/embeddings.ts';
import type { Fragment, RetrievalService } from '../retrieval/retrieval.service.ts';
import { Visibility } from '../vocabulary.ts';
import { AnswerEventType, type AgentAnswer, type AgentQueryInput, type AnswerEvent } from './answer.inputs.ts';
import { extractiveAnswer, pieces } from './extractive.ts';
import { buildTurns } from './prompt.ts';
import { RateLimiter } from './rate-limit.ts';
import type { QueryAllowance } from './usage.ts';

const HISTORY_MESSAGES = 20;
const SOURCES_FOR_ANSWER = 5;

/**
 * The conversation an answer belongs to. A new one is only written with the answer's messages
 * (in the same transaction), so a refused or failed question leaves no empty conversation, and
 * a new conversation has no history to read.
 */
interface ConversationRef {
  id: string;
  visitorId: string;
  isNew: boolean;
}

export interface AnswerStream {
  conversationId: string;
  visitorId: string;
  /** `answer` events, then one `endpoint_response`. Leaving early (return()) aborts the model call. */
  events: AsyncIterableIterator<AnswerEvent>;
}

export class AnswerService {
  private readonly perVisitor: RateLimiter;
  private readonly perIp: RateLimiter;

  constructor(
    private readonly config: Config,
    private readonly agents: AgentService,
    private readonly retrieval: RetrievalService,
    private readonly chat: ChatModel | null,
    private readonly allowance: QueryAllowance,
  ) {
    this.perVisitor = new RateLimiter(config.rateLimits.perVisitorPerMinute);
    this.perIp = new RateLimiter(config.rateLimits.perIpPerMinute);
  }

  /** The complete answer. Throws as `ask` does. */
  async answer(em: Em, auth: Auth, ip: string, agentId: string, input: AgentQueryInput): Promise<AgentAnswer> {
    const stream = await this.ask(em, auth, ip, agentId, input);
    for await (const event of stream.events) if (event.type === AnswerEventType.endpoint_response) return event.response!;
    throw new AppError('INTERNAL', 'The answer ended without its response.');
  }

  /**
   * Checks and prepares an answer; the returned stream produces it.
   * Throws NOT_FOUND (agent, or a conversation of another agent), RATE_LIMITED, PAYMENT_REQUIRED, BAD_USER_INPUT.
   */
  async ask(em: Em, auth: Auth, ip: string, agentId: string, input: AgentQueryInput): Promise<AnswerStream> {
    const agent = await this.agents.get(em, auth, agentId);
    const anonymousVisitor = auth.kind === 'anonymous' || auth.organizationId !== agent.organization.id;
    const visitorId = input.visitorId?.trim() || newId();

    if (anonymousVisitor) {
      // Only a public agent gets this far for outsiders (agents.get answers NOT_FOUND otherwise).
      if (agent.visibility !== Visibility.public) throw notFound('Agent');
      if (!this.perIp.hit(ip) || !this.perVisitor.hit(`${agent.id}|${visitorId}`)) {
        throw new AppError('RATE_LIMITED', 'Too many questions; wait a minute and try again.');
      }
    }

    const conversation = await this.conversationFor(em, agent, input.conversationId, visitorId);
    const period = await this.allowance.reserve(em, agent.organization.id);
    const controller = new AbortController();
    const generator = this.produce(em, agent, conversation, input, controller, period) as AsyncGenerator<AnswerEvent>;
    // Every check has passed: start producing now, so the model request is on its way while
    // the caller sets up the stream. The first event waits for the first next().
    let first: Promise<IteratorResult<AnswerEvent>> | null = generator.next();
    first.catch(() => {}); // reported to whoever reads it; never an unhandled rejection
    // return() aborts the model call at once, even while the generator waits for the next chunk.
    const events: AsyncIterableIterator<AnswerEvent> = {
      next: () => {
        const pending = first;
        first = null;
        return pending ?? generator.next();
      },
      return: (value?: unknown) => {
        first = null;
        controller.abort();
        return generator.return(value as never);
      },
      throw: (error?: unknown) => generator.throw(error),
      [Symbol.asyncIterator]() {
        return events;
      },
    };
    return { conversationId: conversation.id, visitorId: conversation.visitorId, events };
  }

  /** The answer's events; `period` is the month its reserved query counts in. */
  private async *produce(em: Em, agent: Agent, conversation: ConversationRef, input: AgentQueryInput, controller: AbortController, period: string): AsyncGenerator<AnswerEvent> {
    const { signal } = controller;
    let text = '';
    let usage: Usage | null = null;
    let finished = false;
    let fragments: Fragment[] = [];
    try {
      const datastores = await this.agents.linkedDatastores(em, agent);
      fragments = datastores.length ? await this.retrieval.search(em, datastores, { query: input.query, topK: SOURCES_FOR_ANSWER, filters: input.filters }, signal) : [];
      if (this.chat) {
        const history = conversation.isNew ? [] : await this.history(em, conversation.id);
        const turns = buildTurns(agent, input, fragments, history);
        const model = this.config.models[input.modelName ?? agent.modelName];
        for await (const chunk of this.chat.stream(turns, {
          model,
          temperature: input.temperature ?? agent.temperature,
          maxTokens: input.maxTokens ?? undefined,
          topP: input.topP ?? undefined,
          presencePenalty: input.presencePenalty ?? undefined,
          frequencyPenalty: input.frequencyPenalty ?? undefined,
        }, signal)) {
          if (chunk.type === 'usage') usage = chunk.usage;
          else {
            text += chunk.text;
            yield { type: AnswerEventType.answer, text: chunk.text };
          }
        }
      } else {
        for (const piece of pieces(extractiveAnswer(fragments, datastores.length > 0))) {
          text += piece;
          yield { type: AnswerEventType.answer, text: piece };
        }
      }
      const messageId = await this.persist(em, agent, conversation, input.query, text, fragments, usage, {});
      finished = true;
      this.allowance.reserveAhead(em, agent.organization.id); // the next question starts without it
      yield {
        type: AnswerEventType.endpoint_response,
        response: { answer: text, conversationId: conversation.id, visitorId: conversation.visitorId, sources: fragments, messageId },
      };
    } catch (err) {
      if (err instanceof ChatError || err instanceof EmbeddingError) throw new AppError('UPSTREAM_FAILED', err.message, undefined, err);
      throw err;
    } finally {
      if (!finished) {
        controller.abort(); // the client left, or something failed: stop the model call
        if (text) await this.persist(em, agent, conversation, input.query, text, fragments, usage, { incomplete: true }).catch(() => {});
        else await this.allowance.refund(em, agent.organization.id, period).catch(() => {});
      }
    }
  }

  private async conversationFor(em: Em, agent: Agent, conversationId: string | null | undefined, visitorId: string): Promise<ConversationRef> {
    if (conversationId) {
      const found = isId(conversationId) ? await em.findOne(Conversation, { id: conversationId, agent: agent.id }, { fields: ['id', 'visitorId'] }) : null;
      if (!found) throw notFound('Conversation');
      return { id: found.id, visitorId: found.visitorId, isNew: false };
    }
    // The id is the visitor's access token: random, as Conversation's own default.
    return { id: randomUUID(), visitorId, isNew: true };
  }

  private async history(em: Em, conversationId: string): Promise<{ from: MessageFrom; text: string }[]> {
    const recent = await em.find(Message, { conversation: conversationId }, { orderBy: { id: 'desc' }, limit: HISTORY_MESSAGES, fields: ['from', 'text'] });
    return recent.reverse().map((m) => ({ from: m.from, text: m.text }));
  }

  /** Both messages, and a new conversation with them, in one transaction. */
  private async persist(em: Em, agent: Agent, conversation: ConversationRef, question: string, answer: string, sources: Fragment[], usage: Usage | null, metadata: Record<string, unknown>): Promise<string> {
    const fork = em.fork();
    const agentMessage = await fork.transactional(async (tx) => {
      if (conversation.isNew) {
        tx.create(Conversation, { id: conversation.id, organization: agent.organization.id, agent: agent.id, visitorId: conversation.visitorId, channel: 'api' });
      }
      tx.create(Message, { conversation: conversation.id, from: MessageFrom.human, text: question });
      const reply = tx.create(Message, {
        conversation: conversation.id,
        from: MessageFrom.agent,
        text: answer,
        sources: sources as unknown as Record<string, unknown>[],
        usage: usage as unknown as Record<string, unknown> | null,
        metadata,
      });
      await tx.flush();
      return reply;
    });
    return agentMessage.id;
  }
}
