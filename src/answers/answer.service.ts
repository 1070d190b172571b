/**
 * An agent answers: retrieve from its datastores, build the prompt, call the model (or the
 * extractive answerer), persist both messages. Every check that can refuse a request runs
 * before the answer stream is handed out, so a stream never starts just to fail.
 */
import { isOutsider } from '../access.ts';
import type { Agent } from '../agents/agent.entity.ts';
import type { AgentService } from '../agents/agent.service.ts';
import type { Auth } from '../auth/auth.ts';
import type { Config } from '../config.ts';
import type { ConversationRef, ConversationService } from '../conversations/conversation.service.ts';
import { MessageFrom } from '../conversations/message.entity.ts';
import { turnStream, type TurnControl } from '../conversations/turn-stream.ts';
import type { Em } from '../db/orm.ts';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Limits } from '../limits/limits.ts';
import { ChatError, type ChatModel, type Usage } from '../providers/chat.ts';
import { EmbeddingError } from '../providers/embeddings.ts';
import type { Fragment, RetrievalService } from '../retrieval/retrieval.service.ts';
import { AnswerEventType, type AgentAnswer, type AgentQueryInput, type AnswerEvent } from './answer.inputs.ts';
import { extractiveAnswer, pieces } from './extractive.ts';
import { buildTurns } from './prompt.ts';

const HISTORY_MESSAGES = 20;
export const SOURCES_FOR_ANSWER = 5;

/**
 * What an entry point other than the agent query may add (the OpenAI-compatible endpoint, MCP):
 * `history` stands for the stored one of a new conversation (a client that keeps its own) and is
 * stored ahead of the question; `channel` is the conversation's.
 */
export interface AskOptions {
  history?: { from: MessageFrom; text: string }[];
  channel?: string;
  /** The `Origin` of a browser's request, held to the agent's allowedOrigins. */
  origin?: string;
}

export interface AnswerStream {
  conversationId: string;
  visitorId: string;
  /** `answer` events, then one `endpoint_response`. Leaving early (return()) aborts the model call. */
  events: AsyncIterableIterator<AnswerEvent>;
}

export class AnswerService {
  constructor(
    private readonly config: Config,
    private readonly agents: AgentService,
    private readonly retrieval: RetrievalService,
    private readonly chat: ChatModel | null,
    private readonly limits: Limits,
    private readonly conversations: ConversationService,
  ) {}

  /** The complete answer. Throws as `ask` does. */
  async answer(em: Em, auth: Auth, ip: string, agentId: string, input: AgentQueryInput, opts: AskOptions = {}): Promise<AgentAnswer> {
    const stream = await this.ask(em, auth, ip, agentId, input, opts);
    for await (const event of stream.events) if (event.type === AnswerEventType.endpoint_response) return event.response!;
    throw new AppError('INTERNAL', 'The answer ended without its response.');
  }

  /**
   * Checks and prepares an answer; the returned stream produces it.
   * Throws UNAUTHENTICATED (no credentials for a private or unknown agent), NOT_FOUND (agent, or a conversation of another agent), FORBIDDEN (origin), RATE_LIMITED, PAYMENT_REQUIRED, BAD_USER_INPUT.
   */
  async ask(em: Em, auth: Auth, ip: string, agentId: string, input: AgentQueryInput, opts: AskOptions = {}): Promise<AnswerStream> {
    const agent = await this.agents.getToUse(em, auth, agentId, opts.origin);
    const anonymousVisitor = isOutsider(auth, agent);
    const visitorId = input.visitorId?.trim() || newId();

    // agents.get has refused a private agent to outsiders; they are held to the visitor rates.
    if (anonymousVisitor) {
      await this.limits.admitVisitor(em, { scope: agent.id, visitorId, ip, what: 'questions' });
    }

    const conversation = await this.conversations.open(em, { organizationId: agent.organization.id, agentId: agent.id, channel: opts.channel ?? 'api' }, input.conversationId, visitorId);
    // Given history belongs to a new conversation only: a continued one has its own, stored.
    const given = conversation.isNew ? (opts.history ?? []) : [];
    const organizationId = agent.organization.id;
    const period = await this.limits.queries.reserve(em, organizationId);
    const found: Found = { fragments: [], usage: null };
    // What was said is kept. The query is given back when nothing was kept, or when the model
    // failed (an endpoint error or MODEL_TIMEOUT_MS); a visitor who stops an answer has used it.
    const giveBack = () => this.limits.queries.refund(em, organizationId, period);
    const events = turnStream(
      (turn) => this.produce(em, agent, conversation, input, turn, found, given),
      async (said, end) => {
        if (!said) return giveBack();
        const kept = await this.persist(em, conversation, given, input.query, said, found, { incomplete: true }).then(
          () => true,
          () => false,
        );
        if (!kept || end === 'failed') await giveBack();
      },
    );
    return { conversationId: conversation.id, visitorId: conversation.visitorId, events };
  }

  /** The answer's events; `found` keeps what a partial answer is stored with. */
  private async *produce(em: Em, agent: Agent, conversation: ConversationRef, input: AgentQueryInput, turn: TurnControl, found: Found, given: Said[]): AsyncGenerator<AnswerEvent> {
    const { signal } = turn;
    try {
      const datastores = await this.agents.linkedDatastores(em, agent);
      found.fragments = datastores.length ? await this.retrieval.search(em, datastores, { query: input.query, topK: SOURCES_FOR_ANSWER, filters: input.filters }, signal) : [];
      if (this.chat) {
        const history = given.length ? given.slice(-HISTORY_MESSAGES) : await this.conversations.history(em, conversation, HISTORY_MESSAGES);
        const turns = buildTurns(agent, input, found.fragments, history);
        const model = this.config.models[input.modelName ?? agent.modelName];
        for await (const chunk of this.chat.stream(turns, {
          model,
          temperature: input.temperature ?? agent.temperature,
          maxTokens: input.maxTokens ?? undefined,
          topP: input.topP ?? undefined,
          presencePenalty: input.presencePenalty ?? undefined,
          frequencyPenalty: input.frequencyPenalty ?? undefined,
        }, signal)) {
          if (chunk.type === 'usage') found.usage = chunk.usage;
          else {
            turn.said(chunk.text);
            yield { type: AnswerEventType.answer, text: chunk.text };
          }
        }
      } else {
        for (const piece of pieces(await extractiveAnswer(input.query, found.fragments, datastores.length > 0, this.retrieval.embedder, signal))) {
          turn.said(piece);
          yield { type: AnswerEventType.answer, text: piece };
        }
      }
      const messageId = await this.persist(em, conversation, given, input.query, turn.text, found, {});
      turn.done();
      this.limits.queries.reserveAhead(em, agent.organization.id); // the next question starts without it
      yield {
        type: AnswerEventType.endpoint_response,
        response: { answer: turn.text, conversationId: conversation.id, visitorId: conversation.visitorId, sources: found.fragments, messageId, usage: found.usage },
      };
    } catch (err) {
      if (err instanceof ChatError || err instanceof EmbeddingError) throw new AppError('UPSTREAM_FAILED', err.message, undefined, err);
      throw err;
    }
  }

  /** Both messages (and a new conversation with them and its given history), in one transaction. */
  private async persist(em: Em, conversation: ConversationRef, given: Said[], question: string, answer: string, found: Found, metadata: Record<string, unknown>): Promise<string> {
    const stored = await this.conversations.append(em, conversation, [
      ...given.map((m) => ({ from: m.from, text: m.text })),
      { from: MessageFrom.human, text: question },
      { from: MessageFrom.agent, text: answer, sources: found.fragments as unknown as Record<string, unknown>[], usage: found.usage as unknown as Record<string, unknown> | null, metadata },
    ]);
    return stored.at(-1)!.id;
  }
}

type Said = { from: MessageFrom; text: string };

/** What an answer was built from so far: stored with it, complete or partial. */
interface Found {
  fragments: Fragment[];
  usage: Usage | null;
}
