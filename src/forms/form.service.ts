/**
 * Conversational forms: their management by the owning organization, and the public chat that
 * asks one field at a time. A chat turn is decided and committed (values, submission, webhook
 * job) before its reply is handed out as a stream, so every refusal comes before the first
 * byte and a visitor who leaves mid-reply loses nothing they answered.
 */
import { randomBytes } from 'node:crypto';
import { assertCanFillForm, assertOwned, requireCreate, requireMember, type Mode } from '../access.ts';
import { pieces } from '../answers/extractive.ts';
import type { Auth } from '../auth/auth.ts';
import { TtlCache } from '../cache.ts';
import type { Config } from '../config.ts';
import type { ConversationRef, ConversationService } from '../conversations/conversation.service.ts';
import { MessageFrom } from '../conversations/message.entity.ts';
import { turnStream, type TurnControl } from '../conversations/turn-stream.ts';
import { findById } from '../db/find.ts';
import type { Em } from '../db/orm.ts';
import { AppError, badInput } from '../errors.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { newId } from '../ids.ts';
import type { Limits } from '../limits/limits.ts';
import { ChatError, type ChatModel } from '../providers/chat.ts';
import { checkUrl, FetchError } from '../providers/safe-fetch.ts';
import type { Queue } from '../queue/queue.ts';
import { Form, FormSubmission, FormSubmissionStatus } from './form.entity.ts';
import { FormChatEventType, type CreateFormInput, type FormChatEvent, type FormChatInput, type FormChatResponse, type FormWithSecret, type UpdateFormInput } from './form.inputs.ts';
import { extractionTurns, parseExtraction, phrasingTurns } from './form-model.ts';
import { checkFormSchema, compileForm, question, type CompiledForm } from './form-schema.ts';
import { completedTurn, nextField, playTurn, type Extraction, type TurnResult } from './form-turn.ts';

export const FORM_WEBHOOK_QUEUE = 'form-webhook';

export interface FormWebhookJobData {
  submissionId: string;
}

export interface FormChatStream {
  conversationId: string;
  visitorId: string;
  /** `answer` events, one `metadata`, then one `endpoint_response`. Leaving early (return()) aborts the model call. */
  events: AsyncIterableIterator<FormChatEvent>;
}

/** What a turn decided and committed; the stream only says it. */
interface DecidedTurn {
  form: Form;
  conversation: ConversationRef;
  submissionId: string;
  turn: TurnResult;
  status: FormSubmissionStatus;
  /** The intro, said before anything else in a new conversation. */
  intro: string;
  /** Phrase the reply with the model (one was configured and the allowance allowed it). */
  phrase: boolean;
}

/** A conversation's submission as a turn reads it; `stored` false until its first turn writes it. */
interface SubmissionState {
  id: string;
  stored: boolean;
  values: Record<string, unknown>;
  skipped: string[];
  currentField: string | null;
  status: FormSubmissionStatus;
  completedAt: Date | null;
  /** The optimistic lock: the turn this state was read at. */
  turn: number;
}

const SECRET_BYTES = 32;

export class FormService {
  /** Compiled schemas by form id and version: compiling is the costly part of a turn. */
  private readonly compiled = new TtlCache<string, CompiledForm>(10 * 60_000, 1_000);

  constructor(
    private readonly config: Config,
    private readonly queue: Queue,
    private readonly chatModel: ChatModel | null,
    private readonly limits: Limits,
    private readonly conversations: ConversationService,
  ) {}

  // ---- management: members of the owning organization only ----

  /** `write`: to change it. Throws UNAUTHENTICATED, NOT_FOUND (unknown, or another organization's), FORBIDDEN (read-only key). */
  async get(em: Em, auth: Auth, id: string, mode: Mode = 'read'): Promise<Form> {
    // Forms have no public side in GraphQL: another organization's form answers as unknown.
    return assertOwned(auth, await findById(em, Form, id), 'Form', mode);
  }

  /** Newest first. Throws UNAUTHENTICATED, BAD_USER_INPUT. */
  async list(em: Em, auth: Auth, first: number, after?: string | null): Promise<Page<Form>> {
    const member = requireMember(auth);
    const page = pageArgs(first, after);
    const rows = await em.find(
      Form,
      { organization: member.organizationId, ...(page.after ? { id: { $lt: page.after } } : {}) },
      { orderBy: { id: 'desc' }, limit: page.first + 1 },
    );
    return toPage(rows, page.first);
  }

  /** Throws UNAUTHENTICATED, FORBIDDEN (read-only key), BAD_USER_INPUT (schema, webhookUrl). */
  async create(em: Em, auth: Auth, input: CreateFormInput): Promise<FormWithSecret> {
    const member = requireCreate(auth, 'Form');
    const schema = checkFormSchema(input.schema);
    const webhookSecret = newSecret();
    const form = em.create(Form, {
      organization: member.organizationId,
      name: input.name,
      schema,
      intro: input.intro ?? '',
      webhookUrl: this.webhookUrl(input.webhookUrl),
      webhookSecret,
      published: input.published ?? false,
    });
    await em.flush();
    return { form, webhookSecret };
  }

  /** Only the fields given change. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key), BAD_USER_INPUT. */
  async update(em: Em, auth: Auth, id: string, input: UpdateFormInput): Promise<Form> {
    const form = await this.get(em, auth, id, 'write');
    if (input.schema != null) form.schema = checkFormSchema(input.schema);
    if (input.name != null) form.name = input.name;
    if (input.intro != null) form.intro = input.intro;
    if (input.webhookUrl !== undefined) form.webhookUrl = this.webhookUrl(input.webhookUrl);
    if (input.published != null) form.published = input.published;
    await em.flush();
    return form;
  }

  /** Deletes the form with its conversations and submissions. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key). */
  async delete(em: Em, auth: Auth, id: string): Promise<Form> {
    const form = await this.get(em, auth, id, 'write');
    // Its conversations (and their messages) and submissions go with it, by foreign keys.
    await em.remove(form).flush();
    return form;
  }

  /** A new webhook secret; the old one stops signing at once. Throws UNAUTHENTICATED, NOT_FOUND, FORBIDDEN (read-only key). */
  async rotateSecret(em: Em, auth: Auth, id: string): Promise<FormWithSecret> {
    const form = await this.get(em, auth, id, 'write');
    form.webhookSecret = newSecret();
    await em.flush();
    return { form, webhookSecret: form.webhookSecret };
  }

  /** Newest first. Throws UNAUTHENTICATED, NOT_FOUND, BAD_USER_INPUT. */
  async submissions(em: Em, auth: Auth, formId: string, first: number, after?: string | null, status?: FormSubmissionStatus | null): Promise<Page<FormSubmission>> {
    const form = await this.get(em, auth, formId);
    const page = pageArgs(first, after);
    const rows = await em.find(
      FormSubmission,
      { form: form.id, ...(status ? { status } : {}), ...(page.after ? { id: { $lt: page.after } } : {}) },
      { orderBy: { id: 'desc' }, limit: page.first + 1 },
    );
    return toPage(rows, page.first);
  }

  // ---- the public chat ----

  /** The complete reply. Throws as `chat` does. */
  async reply(em: Em, ip: string, formId: string, input: FormChatInput): Promise<FormChatResponse> {
    const stream = await this.chat(em, ip, formId, input);
    for await (const event of stream.events) if (event.type === FormChatEventType.endpoint_response) return event.response!;
    throw new AppError('INTERNAL', 'The form reply ended without its response.');
  }

  /**
   * Plays the visitor's message against the form and commits the result; the returned stream
   * says the reply. No credentials are needed. Throws NOT_FOUND (unknown or unpublished form, a
   * conversation of another form), RATE_LIMITED, CONFLICT (another message of the conversation
   * was answered meanwhile), BAD_USER_INPUT.
   */
  async chat(em: Em, ip: string, formId: string, input: FormChatInput): Promise<FormChatStream> {
    const form = assertCanFillForm(await findById(em, Form, formId));
    const visitorId = input.visitorId?.trim() || newId();
    await this.limits.admitVisitor(em, { scope: form.id, visitorId, ip, what: 'messages' });
    const compiled = this.compile(form);
    const conversation = await this.conversations.open(em, { organizationId: form.organization.id, formId: form.id, channel: 'form' }, input.conversationId, visitorId);
    const submission = await this.submissionOf(em, compiled, conversation);
    const decided = await this.decide(em, form, compiled, conversation, submission, input.query);
    const { turn, status } = decided;
    // The state is committed: a reply cut short keeps what was said, or what was meant. No query
    // is given back: the turn's query was spent reading the message, before the stream.
    const events = turnStream(
      (control) => this.say(em, decided, input.query, control),
      (said) => this.storeReply(em, conversation, said || turn.reply, { currentField: turn.currentField, isValid: turn.isValid, status, incomplete: true }),
    );
    return { conversationId: conversation.id, visitorId: conversation.visitorId, events };
  }

  /** The conversation's submission; a new conversation's is written with its first message. */
  private async submissionOf(em: Em, compiled: CompiledForm, conversation: ConversationRef): Promise<SubmissionState> {
    const found = conversation.isNew ? null : await em.findOne(FormSubmission, { conversation: conversation.id });
    if (found) {
      const { id, values, skipped, currentField, status, completedAt, turn } = found;
      return { id, stored: true, values, skipped, currentField: currentField ?? null, status, completedAt: completedAt ?? null, turn };
    }
    // A new conversation (or, never expected, one without its submission): a fresh start.
    return { id: newId(), stored: false, values: {}, skipped: [], currentField: compiled.fields[0]!.name, status: FormSubmissionStatus.in_progress, completedAt: null, turn: 0 };
  }

  /**
   * Reads the message (with the model when there is one), then commits the new state with the
   * visitor's message, and the conversation itself when it is new, in one transaction.
   */
  private async decide(em: Em, form: Form, compiled: CompiledForm, conversation: ConversationRef, submission: SubmissionState, query: string): Promise<DecidedTurn> {
    const isNew = conversation.isNew;
    const state = { values: { ...submission.values }, skipped: [...submission.skipped], currentField: submission.currentField };
    const alreadyCompleted = submission.status === FormSubmissionStatus.completed;
    let phrase = false;
    let extraction: Extraction | null = null;
    let turn: TurnResult;
    if (alreadyCompleted) turn = completedTurn(state);
    else {
      phrase = this.chatModel !== null && (await this.reserveQuery(em, form));
      if (phrase) extraction = await this.extract(form, compiled, state, query);
      turn = playTurn(compiled, state, query, { first: isNew, extraction });
    }
    const completedNow = !alreadyCompleted && turn.completed;
    const status = alreadyCompleted || completedNow ? FormSubmissionStatus.completed : FormSubmissionStatus.in_progress;
    const completedAt = completedNow ? new Date() : submission.completedAt;
    const after = { values: turn.values, skipped: turn.skipped, currentField: turn.currentField, status, completedAt, turn: submission.turn + 1 };

    const message = { from: MessageFrom.human, text: query, metadata: { field: state.currentField, accepted: turn.accepted, extractedBy: extraction ? 'model' : 'rules' } };
    await this.conversations.append(em, conversation, [message], async (tx) => {
      if (!submission.stored) {
        tx.create(FormSubmission, { id: submission.id, form: form.id, conversation: conversation.id, ...after });
        await tx.flush();
      } else {
        const changed = await tx.nativeUpdate(FormSubmission, { id: submission.id, turn: submission.turn }, { ...after, updatedAt: new Date() });
        if (changed === 0) throw new AppError('CONFLICT', 'Another message of this conversation was answered meanwhile; send this one again.');
      }
      // The job is committed with the completion: neither exists without the other.
      if (completedNow && form.webhookUrl) {
        await this.queue.send(tx, FORM_WEBHOOK_QUEUE, { submissionId: submission.id } satisfies FormWebhookJobData, { singletonKey: submission.id });
      }
    });
    return { form, conversation, submissionId: submission.id, turn, status, intro: isNew ? form.intro.trim() : '', phrase };
  }

  /**
   * One model question per turn counts against the monthly allowance, reserved as every entry
   * point does; when it is used up, the form goes on without the model (a form never stops for it).
   */
  private async reserveQuery(em: Em, form: Form): Promise<boolean> {
    try {
      await this.limits.queries.reserve(em, form.organization.id);
      return true;
    } catch (err) {
      if (err instanceof AppError && err.code === 'PAYMENT_REQUIRED') return false;
      throw err;
    }
  }

  /** The model's reading of the message; null (the deterministic reading) when its JSON is unusable or the endpoint fails. */
  private async extract(form: Form, compiled: CompiledForm, state: { values: Record<string, unknown>; skipped: string[]; currentField: string | null }, query: string): Promise<Extraction | null> {
    const open = compiled.fields.filter((f) => !Object.hasOwn(state.values, f.name) && !state.skipped.includes(f.name));
    const current = (state.currentField ? compiled.field(state.currentField) : null) ?? nextField(compiled, state);
    if (!current || !open.length) return null;
    try {
      const { text } = await this.chatModel!.complete(extractionTurns(form.name, open, current, question(current), query), { model: this.config.models.model_3_5_turbo, temperature: 0 });
      return parseExtraction(text);
    } catch (err) {
      if (err instanceof ChatError) return null;
      throw err;
    }
  }

  /** The reply as events: intro and reply text, the state, the response; then the agent message is stored. */
  private async *say(em: Em, decided: DecidedTurn, query: string, control: TurnControl): AsyncGenerator<FormChatEvent> {
    const { conversation, turn, status } = decided;
    const speak = (piece: string): FormChatEvent => {
      control.said(piece);
      return { type: FormChatEventType.answer, text: piece };
    };
    const state = { currentField: turn.currentField, isValid: turn.isValid };
    if (decided.intro) for (const piece of pieces(`${decided.intro}\n\n`)) yield speak(piece);
    let said = false;
    if (decided.phrase) {
      try {
        for await (const chunk of this.chatModel!.stream(phrasingTurns(decided.form.name, query, turn.reply), { model: this.config.models.model_3_5_turbo, temperature: 0.3 }, control.signal)) {
          if (chunk.type !== 'text') continue;
          said = true;
          yield speak(chunk.text);
        }
      } catch (err) {
        // The state is committed whatever the model does; only its words are missing, so the
        // deterministic reply follows (after what the model managed to say, if anything).
        if (!(err instanceof ChatError)) throw err;
        if (said) {
          yield speak('\n\n');
          said = false;
        }
      }
    }
    if (!said) for (const piece of pieces(turn.reply)) yield speak(piece);
    const messageId = await this.storeReply(em, conversation, control.text, { ...state, status });
    control.done();
    yield { type: FormChatEventType.metadata, metadata: state };
    yield {
      type: FormChatEventType.endpoint_response,
      response: {
        answer: control.text,
        conversationId: conversation.id,
        visitorId: conversation.visitorId,
        currentField: turn.currentField,
        isValid: turn.isValid,
        values: turn.values,
        status,
        submissionId: decided.submissionId,
        messageId,
      },
    };
  }

  private async storeReply(em: Em, conversation: ConversationRef, text: string, metadata: Record<string, unknown>): Promise<string> {
    const [message] = await this.conversations.append(em, conversation, [{ from: MessageFrom.agent, text, metadata }]);
    return message!.id;
  }

  private compile(form: Form): CompiledForm {
    const key = `${form.id}:${form.updatedAt.getTime()}`;
    let compiled = this.compiled.get(key);
    if (!compiled) {
      compiled = compileForm(form.schema);
      this.compiled.set(key, compiled);
    }
    return compiled;
  }

  /** http(s) only; literal private addresses are refused unless ALLOW_PRIVATE_URLS. Throws BAD_USER_INPUT. */
  private webhookUrl(url: string | null | undefined): string | null {
    if (url == null || url.trim() === '') return null;
    try {
      return checkUrl(url.trim(), this.config.allowPrivateUrls).href;
    } catch (err) {
      if (err instanceof FetchError) throw badInput(`webhookUrl: ${err.message}`, { field: 'webhookUrl' });
      throw err;
    }
  }
}

function newSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64url')}`;
}
