/**
 * Chat models behind one small interface: any OpenAI-compatible endpoint through LangChain's
 * ChatOpenAI. With no endpoint configured there is no chat model (null), and callers use the
 * embedded extractive answerer instead; nothing here pretends to be a language model.
 */
import { logEndpointFailure } from './endpoint-log.ts';
import type { BaseMessage } from '@langchain/core/messages';
import type { ChatOpenAI } from '@langchain/openai';
import { langchainMessages, langchainOpenAi } from './langchain.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { createHttpFetch } from './http-fetch.ts';
import { modelDeadline, type ModelDeadline } from './model-deadline.ts';

export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  content: string | ContentPart[];
}

export interface ChatParams {
  /** The endpoint's model id. */
  model: string;
  temperature?: number;
  maxTokens?: number;
  topP?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export type ChatChunk = { type: 'text'; text: string } | { type: 'usage'; usage: Usage };

export interface ChatModel {
  /** Yields text as the model produces it, then usage when the endpoint reports it. Aborting `signal` cancels the request. */
  stream(turns: ChatTurn[], params: ChatParams, signal?: AbortSignal): AsyncIterable<ChatChunk>;
  complete(turns: ChatTurn[], params: ChatParams, signal?: AbortSignal): Promise<{ text: string; usage: Usage | null }>;
}

export class ChatError extends Error {
  override name = 'ChatError';
}

/** Distinct parameter sets whose clients are kept. */
const MAX_CLIENTS = 64;

export function createChatModel(config: Pick<Config, 'openai'> & Partial<Pick<Config, 'modelTimeoutMs'>>, opts: { logger?: Logger } = {}): ChatModel | null {
  if (!config.openai) return null;
  const { logger } = opts;
  const timeoutMs = config.modelTimeoutMs ?? 60_000;
  /** What stopped the request: our deadline names itself; anything else is the endpoint's or the caller's. */
  const cause = (err: unknown, deadline: ModelDeadline) => (deadline.expired ? new ChatError(`The model endpoint sent nothing for ${timeoutMs} ms (MODEL_TIMEOUT_MS).`) : err);
  /** The endpoint failed (not the caller leaving): logged with what an operator needs, then wrapped. */
  const failed = (err: unknown, params: ChatParams, started: number, signal?: AbortSignal) => {
    if (!signal?.aborted) {
      const status = (err as { status?: unknown }).status;
      logEndpointFailure(logger, {
        endpoint: 'chat',
        model: params.model,
        status: typeof status === 'number' ? status : null,
        started,
        message: err instanceof Error ? err.message.split('\n')[0]! : String(err),
      });
    }
    return wrap(err, signal);
  };
  const { baseUrl, apiKey } = config.openai;
  // Kept-alive node:http sockets: the built-in fetch costs about half a millisecond more per request.
  const fetch = createHttpFetch({ maxSockets: config.openai?.maxSockets });
  // One ChatOpenAI (and its openai client) per distinct set of parameters, reused: building
  // them costs a fraction of a millisecond that every streamed answer would pay first.
  const clients = new Map<string, ChatOpenAI>();
  const client = async (params: ChatParams, streaming: boolean) => {
    const key = JSON.stringify([streaming, params.model, params.temperature, params.maxTokens, params.topP, params.presencePenalty, params.frequencyPenalty]);
    let model = clients.get(key);
    if (model) {
      clients.delete(key); // most recently used last
      clients.set(key, model);
      return model;
    }
    const { ChatOpenAI } = await langchainOpenAi();
    model = new ChatOpenAI({
      model: params.model,
      apiKey,
      configuration: { baseURL: baseUrl, fetch },
      streaming,
      streamUsage: true,
      maxRetries: 1,
      // MODEL_TIMEOUT_MS is enforced per token below; the client's own timeout only backs it up.
      timeout: timeoutMs + 5_000,
      ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
      ...(params.maxTokens !== undefined ? { maxTokens: params.maxTokens } : {}),
      ...(params.topP !== undefined ? { topP: params.topP } : {}),
      ...(params.presencePenalty !== undefined ? { presencePenalty: params.presencePenalty } : {}),
      ...(params.frequencyPenalty !== undefined ? { frequencyPenalty: params.frequencyPenalty } : {}),
    });
    clients.set(key, model);
    if (clients.size > MAX_CLIENTS) clients.delete(clients.keys().next().value!);
    return model;
  };

  return {
    async *stream(turns, params, signal) {
      // Before the deadline starts: the first call imports LangChain, which is no wait on the endpoint.
      const [model, messages] = await Promise.all([client(params, true), toMessages(turns)]);
      const started = performance.now();
      const deadline = modelDeadline(timeoutMs, signal);
      try {
        let stream;
        try {
          stream = await model.stream(messages, { signal: deadline.signal });
        } catch (err) {
          throw failed(cause(err, deadline), params, started, signal);
        }
        try {
          for await (const chunk of stream) {
            deadline.rearm();
            const text = typeof chunk.content === 'string' ? chunk.content : '';
            const u = chunk.usage_metadata;
            const usage = u && (u.input_tokens || u.output_tokens) ? { promptTokens: u.input_tokens, completionTokens: u.output_tokens } : null;
            if (!text && !usage) continue;
            // While our reader holds the stream, the endpoint is not the one being slow.
            deadline.pause();
            if (text) yield { type: 'text', text };
            if (usage) yield { type: 'usage', usage };
            deadline.rearm();
          }
        } catch (err) {
          throw failed(cause(err, deadline), params, started, signal);
        }
      } finally {
        deadline.clear();
      }
    },
    async complete(turns, params, signal) {
      const [model, messages] = await Promise.all([client(params, false), toMessages(turns)]);
      const started = performance.now();
      const deadline = modelDeadline(timeoutMs, signal);
      try {
        const message = await model.invoke(messages, { signal: deadline.signal });
        const u = message.usage_metadata;
        return {
          text: typeof message.content === 'string' ? message.content : '',
          usage: u ? { promptTokens: u.input_tokens, completionTokens: u.output_tokens } : null,
        };
      } catch (err) {
        throw failed(cause(err, deadline), params, started, signal);
      } finally {
        deadline.clear();
      }
    },
  };
}

async function toMessages(turns: ChatTurn[]): Promise<BaseMessage[]> {
  const { AIMessage, HumanMessage, SystemMessage } = await langchainMessages();
  return turns.map((t) =>
    t.role === 'system' ? new SystemMessage({ content: t.content as string }) : t.role === 'assistant' ? new AIMessage({ content: t.content as string }) : new HumanMessage({ content: t.content }),
  );
}

function wrap(err: unknown, signal?: AbortSignal): unknown {
  if (signal?.aborted) return err; // the caller stopped: not a model failure
  if (err instanceof ChatError) return err;
  const status = (err as { status?: number }).status;
  const message = err instanceof Error ? err.message : String(err);
  // The client's error stays as the cause: its status and name tell the metrics what kind of failure it was.
  return new ChatError(status ? `The model endpoint answered ${status}: ${message}` : `The model endpoint failed: ${message}`, { cause: err });
}
