/**
 * The MCP tools: each one call of the service the GraphQL resolver of the same thing calls,
 * with the request's context (its key, its limits). Expected failures become tool errors that
 * say what the GraphQL error would say (a private agent is "not found", as an unknown one).
 */
import type { IncomingMessage } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { AgentQueryInput } from '../../answers/answer.inputs.ts';
import type { Context } from '../../graphql/context.ts';
import { normalizeError } from '../../graphql/errors.ts';
import { assertStorableText } from '../../graphql/text-guard.ts';
import { allPages, MAX_PAGE } from '../../graphql/pagination.ts';
import { validatedInput } from '../../graphql/validate.ts';
import { SCORE_DESCRIPTION } from '../../answers/answer.inputs.ts';
import { TOP_K_MAX, type Fragment } from '../../retrieval/retrieval.service.ts';

const fragment = z.object({
  text: z.string(),
  score: z.number().describe(SCORE_DESCRIPTION),
  source: z.string().describe('The page URL or the file name.'),
  datasource_id: z.string(),
  datasource_name: z.string(),
  page: z.number().nullable(),
  custom_id: z.string().nullable(),
});

const agent = z.object({ id: z.string(), handle: z.string().nullable(), name: z.string(), description: z.string(), visibility: z.string() });
const datastore = z.object({ id: z.string(), name: z.string(), description: z.string(), visibility: z.string() });

/** Registers the four tools on a server made for one request. */
export function registerTools(server: McpServer, ctx: Context, req: IncomingMessage, onInternalError: (error: unknown, req: IncomingMessage) => void): void {
  /** A tool's result as text (JSON unless given) and as structuredContent; failures as tool errors. */
  const run =
    <A, R extends Record<string, unknown>>(call: (args: A) => Promise<R>, text: (result: R) => string = (r) => JSON.stringify(r, null, 2)) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        // Questions are stored and queries reach SQL: refused as GraphQL refuses them.
        assertStorableText({ input: args });
        const result = await call(args);
        return { content: [{ type: 'text', text: text(result) }], structuredContent: result };
      } catch (err) {
        const { error, internal } = normalizeError(err);
        if (internal) onInternalError(error.originalError ?? err, req);
        return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }] };
      }
    };

  server.registerTool(
    'list_agents',
    {
      title: 'List agents',
      description: "Lists the agents of the API key's organization (id, @handle, name, description). Needs an API key; a public agent of anyone can still be asked by its id or @handle.",
      inputSchema: {},
      outputSchema: { agents: z.array(agent) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run(async () => ({
      agents: (await allPages((after) => ctx.services.agents.list(ctx.em, ctx.auth, MAX_PAGE, after))).map((a) => ({ id: a.id, handle: a.handle ? `@${a.handle}` : null, name: a.name, description: a.description, visibility: a.visibility })),
    })),
  );

  server.registerTool(
    'ask_agent',
    {
      title: 'Ask an agent',
      description:
        'Asks an agent a question. The agent answers from its datastores with its own prompts; the result is the answer, the conversation id (pass it back as conversation_id to ask a follow-up in the same conversation) and the sources (the fragments the answer was built from).',
      inputSchema: {
        agent: z.string().min(1).describe('The agent: its id or @handle (list_agents).'),
        question: z.string().min(1).max(10_000).describe('The question, in natural language.'),
        conversation_id: z.string().optional().describe('Continue this conversation (from an earlier answer); absent: a new one.'),
      },
      outputSchema: { answer: z.string(), conversation_id: z.string(), sources: z.array(fragment) },
      annotations: { readOnlyHint: false, openWorldHint: false },
    },
    run(
      async ({ agent: id, question, conversation_id }: { agent: string; question: string; conversation_id?: string }) => {
        const input = validatedInput(AgentQueryInput, { query: question, conversationId: conversation_id ?? null });
        const answer = await ctx.services.answers.answer(ctx.em, ctx.auth, ctx.ip, id, input, { channel: 'mcp', origin: ctx.origin });
        return { answer: answer.answer, conversation_id: answer.conversationId, sources: answer.sources as Fragment[] };
      },
      (r) => `${r.answer}${r.sources.length ? `\n\nSources:\n${r.sources.map((s, i) => `[${i + 1}] ${s.source}${s.page != null ? `, page ${s.page}` : ''}`).join('\n')}` : ''}`,
    ),
  );

  server.registerTool(
    'list_datastores',
    {
      title: 'List datastores',
      description: "Lists the datastores (knowledge bases) of the API key's organization. Needs an API key; a public datastore of anyone can still be searched by its id.",
      inputSchema: {},
      outputSchema: { datastores: z.array(datastore) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run(async () => ({
      datastores: (await allPages((after) => ctx.services.datastores.list(ctx.em, ctx.auth, MAX_PAGE, after))).map((d) => ({ id: d.id, name: d.name, description: d.description, visibility: d.visibility })),
    })),
  );

  server.registerTool(
    'search_datastore',
    {
      title: 'Search a datastore',
      description: 'Finds the fragments of a datastore most relevant to a query (semantic and full-text search fused), best first, each with its score and source.',
      inputSchema: {
        datastore: z.string().min(1).describe('The datastore id (list_datastores).'),
        query: z.string().min(1).max(10_000).describe('What to look for, in natural language.'),
        topK: z.number().int().min(1).max(TOP_K_MAX).optional().describe(`How many fragments, 1 to ${TOP_K_MAX}; default 5.`),
        filters: z
          .object({
            custom_ids: z.array(z.string()).optional().describe('Only fragments of documents with these custom ids.'),
            datasource_ids: z.array(z.string()).optional().describe('Only fragments of these documents (datasources).'),
          })
          .optional(),
        minScore: z.number().min(0).max(1).optional().describe('Leave out fragments whose score is below this (0 to 1).'),
      },
      outputSchema: { fragments: z.array(fragment) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    run(async ({ datastore: id, query, topK, filters, minScore }: { datastore: string; query: string; topK?: number; filters?: { custom_ids?: string[]; datasource_ids?: string[] }; minScore?: number }) => ({
      fragments: await ctx.services.retrieval.query(ctx.em, ctx.auth, ctx.ip, id, { query, topK, filters, minScore }, ctx.origin),
    })),
  );
}
