/**
 * A chat completion request as an agent query: the last user message is the question, the
 * earlier ones the history; the sampling parameters are the agent query's own fields, checked by
 * the same validation (AgentQueryInput's bounds), with errors naming the OpenAI parameter.
 */
import { AgentQueryInput } from '../../answers/answer.inputs.ts';
import { MessageFrom } from '../../conversations/message.entity.ts';
import { AppError, badInput } from '../../errors.ts';
import { normalizeError } from '../../graphql/errors.ts';
import { assertStorableText } from '../../graphql/text-guard.ts';
import { validatedInput } from '../../graphql/validate.ts';
import { isRecord } from '../http.ts';

export interface CompletionRequest {
  /** The agent: its id or "@handle". */
  model: string;
  input: AgentQueryInput;
  /** The earlier messages (used only when no conversation is continued). */
  history: { from: MessageFrom; text: string }[];
  stream: boolean;
  includeUsage: boolean;
}

/** Our input field -> the OpenAI parameter it comes from (for `param` in errors). */
const PARAM_OF: Record<string, string> = {
  query: 'messages',
  temperature: 'temperature',
  maxTokens: 'max_tokens',
  topP: 'top_p',
  presencePenalty: 'presence_penalty',
  frequencyPenalty: 'frequency_penalty',
  visitorId: 'user',
  conversationId: 'conversation_id',
};

/** Throws BAD_USER_INPUT with `details.field` = the OpenAI parameter. */
export function parseCompletionRequest(body: unknown, conversationHeader: string | undefined): CompletionRequest {
  if (!isRecord(body)) throw badInput('The request body must be a JSON object.');
  // Messages are stored: text PostgreSQL cannot hold is refused here, as GraphQL refuses it.
  assertStorableText({ input: body });
  const model = body.model;
  if (typeof model !== 'string' || !model.trim()) throw badInput('`model` is required: the id or @handle of an agent (GET /v1/models lists them).', { field: 'model' });

  for (const unsupported of ['tools', 'functions', 'tool_choice', 'function_call', 'response_format', 'audio', 'modalities', 'logprobs'] as const) {
    const value = body[unsupported];
    if (value == null || value === false || (Array.isArray(value) && value.length === 0) || (unsupported === 'response_format' && isRecord(value) && value.type === 'text')) continue;
    if (unsupported === 'tool_choice' && value === 'none') continue;
    throw badInput(`\`${unsupported}\` is not supported: an agent answers with text from its datastores.`, { field: unsupported });
  }
  if (body.n != null && body.n !== 1) throw badInput('`n` must be 1: an agent gives one answer.', { field: 'n' });

  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw badInput('`messages` must be a non-empty array.', { field: 'messages' });
  const turns: { role: string; text: string }[] = messages.map((m, i) => {
    const param = `messages[${i}]`;
    if (!isRecord(m) || typeof m.role !== 'string') throw badInput(`${param} must be an object with a \`role\`.`, { field: param });
    if (!['system', 'developer', 'user', 'assistant'].includes(m.role)) throw badInput(`${param}: the role "${m.role}" is not supported (tool calls are not).`, { field: `${param}.role` });
    return { role: m.role, text: textOf(m.content, `${param}.content`) };
  });
  const last = turns.at(-1)!;
  if (last.role !== 'user') throw badInput('The last message must be the user\'s question.', { field: `messages[${turns.length - 1}].role` });
  // System and developer messages are not sent: the agent's own prompts apply.
  const history = turns
    .slice(0, -1)
    .filter((t) => (t.role === 'user' || t.role === 'assistant') && t.text)
    .map((t) => ({ from: t.role === 'user' ? MessageFrom.human : MessageFrom.agent, text: t.text }));

  const number = (name: string): number | null => {
    const v = body[name];
    if (v == null) return null;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw badInput(`\`${name}\` must be a number.`, { field: name });
    return v;
  };
  const maxTokens = number('max_completion_tokens') ?? number('max_tokens');
  if (maxTokens !== null && !Number.isInteger(maxTokens)) throw badInput('`max_tokens` must be a whole number.', { field: body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens' });
  const user = body.user;
  if (user != null && typeof user !== 'string') throw badInput('`user` must be a string.', { field: 'user' });
  const bodyConversation = body.conversation_id;
  if (bodyConversation != null && typeof bodyConversation !== 'string') throw badInput('`conversation_id` must be a string.', { field: 'conversation_id' });
  const conversationId = conversationHeader?.trim() || (bodyConversation as string | null) || null;
  const stream = body.stream;
  if (stream != null && typeof stream !== 'boolean') throw badInput('`stream` must be a boolean.', { field: 'stream' });
  const options = body.stream_options;
  if (options != null && !isRecord(options)) throw badInput('`stream_options` must be an object.', { field: 'stream_options' });

  let input: AgentQueryInput;
  try {
    input = validatedInput(AgentQueryInput, {
      query: last.text,
      conversationId,
      visitorId: user ?? null,
      temperature: number('temperature'),
      maxTokens,
      topP: number('top_p'),
      presencePenalty: number('presence_penalty'),
      frequencyPenalty: number('frequency_penalty'),
    });
  } catch (err) {
    const { error } = normalizeError(err);
    const field = typeof error.details?.field === 'string' ? error.details.field : undefined;
    let param = field ? (PARAM_OF[field] ?? field) : undefined;
    if (field === 'maxTokens' && body.max_completion_tokens != null) param = 'max_completion_tokens';
    if (field === 'query') param = `messages[${turns.length - 1}].content`;
    const message = field && param ? error.message.replaceAll(field, param) : error.message;
    throw new AppError('BAD_USER_INPUT', message, param ? { field: param } : undefined);
  }
  return { model: model.trim(), input, history, stream: stream === true, includeUsage: isRecord(options) && options.include_usage === true };
}

/** A message's text: a string, or text parts. Images and audio are refused, not dropped. */
function textOf(content: unknown, param: string): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badInput(`${param} must be a string or an array of text parts.`, { field: param });
  return content
    .map((part, i) => {
      if (!isRecord(part)) throw badInput(`${param}[${i}] must be a content part.`, { field: `${param}[${i}]` });
      if (part.type !== 'text' || typeof part.text !== 'string') {
        throw badInput(`${param}[${i}]: only text parts are supported (images, audio and files are not).`, { field: `${param}[${i}]` });
      }
      return part.text;
    })
    .join('');
}
