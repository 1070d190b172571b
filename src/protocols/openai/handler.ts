/**
 * The OpenAI-compatible endpoint (docs/openai.md): `GET /v1/models` lists agents, `POST
 * /v1/chat/completions` asks one. A translation onto AgentService and AnswerService: the agent
 * query's access rules, limits, prompting and conversation storage apply unchanged.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Agent } from '../../agents/agent.entity.ts';
import { AnswerEventType } from '../../answers/answer.inputs.ts';
import { AppError, statusOf, type ErrorCode } from '../../errors.ts';
import type { Context } from '../../graphql/context.ts';
import { writable } from '../../http/backpressure.ts';
import { normalizeError } from '../../graphql/errors.ts';
import { allPages, MAX_PAGE } from '../../graphql/pagination.ts';
import { drain, readJsonBody } from '../../http/body.ts';
import { retryAfterOf } from '../../http/rate-headers.ts';
import type { Usage } from '../../providers/chat.ts';
import { sendJson, type ProtocolHandler, type ProtocolOptions } from '../http.ts';
import { parseCompletionRequest } from './request.ts';

export const OPENAI_PREFIX = '/v1';
const HEARTBEAT_MS = 15_000;
const CONVERSATION_HEADER = 'x-conversation-id';

/** Our error codes as OpenAI's error `type`s. */
const TYPE_OF: Partial<Record<ErrorCode, string>> = {
  UNAUTHENTICATED: 'authentication_error',
  PAYMENT_REQUIRED: 'insufficient_quota',
  FORBIDDEN: 'permission_error',
  NOT_FOUND: 'not_found_error',
  RATE_LIMITED: 'rate_limit_error',
  INTERNAL: 'api_error',
  UPSTREAM_FAILED: 'api_error',
  SHUTTING_DOWN: 'api_error',
};

export function openAiError(error: AppError) {
  const field = error.details?.field;
  return {
    error: {
      message: error.message,
      type: TYPE_OF[error.code] ?? 'invalid_request_error',
      param: typeof field === 'string' ? field : null,
      code: error.code,
    },
  };
}

export function createOpenAiHandler(opts: ProtocolOptions): ProtocolHandler {
  const fail = (err: unknown, req: IncomingMessage, res: ServerResponse) => {
    const { error, internal } = normalizeError(err);
    if (internal) opts.onInternalError(error.originalError ?? err, req);
    const retryAfter = retryAfterOf(error);
    sendJson(res, statusOf(error.code), openAiError(error), retryAfter ? { 'retry-after': String(retryAfter) } : {});
  };

  return (req, res, pathname) => {
    if (pathname !== OPENAI_PREFIX && !pathname.startsWith(`${OPENAI_PREFIX}/`)) return false;
    const path = pathname.slice(OPENAI_PREFIX.length).replace(/\/$/, '');
    const run = (handle: (ctx: Context) => Promise<void>) =>
      void (async () => {
        try {
          await handle(await opts.context(req));
        } catch (err) {
          drain(req);
          fail(err, req, res);
        }
      })();

    const model = /^\/models\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && path === '/models') run((ctx) => models(ctx, res));
    else if (req.method === 'GET' && model) run((ctx) => oneModel(ctx, res, decodeParam(model[1]!)));
    else if (req.method === 'POST' && path === '/chat/completions') run((ctx) => completions(ctx, req, res));
    else {
      drain(req);
      sendJson(res, 404, openAiError(new AppError('NOT_FOUND', `No route for ${req.method} ${pathname}; this endpoint serves /v1/models and /v1/chat/completions.`)));
    }
    return true;
  };

  async function models(ctx: Context, res: ServerResponse) {
    // The same listing as the GraphQL `agents` query (and so its rules: a key, scopes), every page.
    const agents = await allPages((after) => ctx.services.agents.list(ctx.em, ctx.auth, MAX_PAGE, after));
    sendJson(res, 200, { object: 'list', data: agents.map(modelOf) });
  }

  async function oneModel(ctx: Context, res: ServerResponse, id: string) {
    sendJson(res, 200, modelOf(await ctx.services.agents.get(ctx.em, ctx.auth, id, ctx.origin)));
  }

  async function completions(ctx: Context, req: IncomingMessage, res: ServerResponse) {
    const header = req.headers[CONVERSATION_HEADER];
    const body = await readJsonBody(req, opts.bodyLimitBytes);
    const request = parseCompletionRequest(body, Array.isArray(header) ? header[0] : header);
    const askOptions = { history: request.history, channel: 'openai', origin: ctx.origin };
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);

    if (!request.stream) {
      const answer = await ctx.services.answers.answer(ctx.em, ctx.auth, ctx.ip, request.model, request.input, askOptions);
      sendJson(
        res,
        200,
        {
          id,
          object: 'chat.completion',
          created,
          model: request.model,
          choices: [{ index: 0, message: { role: 'assistant', content: answer.answer, refusal: null }, logprobs: null, finish_reason: 'stop' }],
          usage: usageOf(answer.usage),
          conversation_id: answer.conversationId,
          sources: answer.sources,
        },
        { 'x-conversation-id': answer.conversationId },
      );
      return;
    }

    const stream = await ctx.services.answers.ask(ctx.em, ctx.auth, ctx.ip, request.model, request.input, askOptions);
    const headers = { 'x-conversation-id': stream.conversationId };
    const events = opts.drain ? opts.drain.events(stream.events) : stream.events;
    let clientGone = false;
    res.on('close', () => {
      if (res.writableFinished) return;
      clientGone = true;
      void events.return?.(); // cancels the model call; the partial answer is kept
    });
    // As the REST stream: the model request leaves before the headers are written.
    await new Promise(setImmediate);
    if (clientGone) return;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no', ...headers });
    const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices, ...(request.includeUsage ? { usage: null } : {}), ...extra })}\n\n`);
    frame([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
    const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
    try {
      for await (const event of events) {
        if (clientGone) break;
        if (event.type === AnswerEventType.answer) {
          // A slow reader holds the model back, as on the REST stream: our buffer stays small.
          if (!frame([{ index: 0, delta: { content: event.text }, logprobs: null, finish_reason: null }])) await writable(res);
          continue;
        }
        const answer = event.response!;
        const finish = [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }];
        const extra = { conversation_id: answer.conversationId, sources: answer.sources };
        // The last chunk before [DONE] carries the sources: the usage chunk when one is asked for.
        if (request.includeUsage) {
          frame(finish);
          frame([], { usage: usageOf(answer.usage), ...extra });
        } else frame(finish, extra);
      }
      if (!clientGone) res.write('data: [DONE]\n\n');
    } catch (err) {
      if (!clientGone) {
        const { error, internal } = normalizeError(err);
        if (internal) opts.onInternalError(error.originalError ?? err, req);
        // OpenAI's clients read an `error` object in the stream as a failed request.
        res.write(`data: ${JSON.stringify(openAiError(error))}\n\n`);
      }
    } finally {
      clearInterval(heartbeat);
      res.end();
    }
  }
}

/** A malformed escape is the client's doing: 400, not a URIError. */
function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new AppError('BAD_USER_INPUT', 'The model in the path is not correctly URL-encoded (UTF-8).', { field: 'model' });
  }
}

function modelOf(agent: Agent) {
  return {
    id: agent.handle ? `@${agent.handle}` : agent.id,
    object: 'model' as const,
    created: Math.floor(new Date(agent.createdAt).getTime() / 1000),
    owned_by: agent.organization.id,
  };
}

/** The model endpoint's counts; zeros when it reported none (the extractive answerer has none). */
function usageOf(usage: Usage | null | undefined) {
  const prompt = usage?.promptTokens ?? 0;
  const completion = usage?.completionTokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
