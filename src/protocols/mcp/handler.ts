/**
 * The MCP server (docs/mcp.md) at /mcp over the Streamable HTTP transport of the official SDK.
 *
 * Stateless: every POST gets its own McpServer and transport, with that request's context (its
 * key). Sessions would keep state in one process's memory that the next request may not reach
 * when several API processes serve one database (docs/design.md), and every tool call is one
 * self-contained service call, so the protocol's sessions would add nothing but that state.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { statusOf } from '../../errors.ts';
import { normalizeError } from '../../graphql/errors.ts';
import { drain, readJsonBody } from '../../http/body.ts';
import { sendJson, type ProtocolHandler, type ProtocolOptions } from '../http.ts';
import { registerTools } from './tools.ts';

export const MCP_PATH = '/mcp';
const SERVER_INFO = { name: 'agentbase', version: '1.0.0' };
const INSTRUCTIONS =
  'Agents answer questions from their datastores (knowledge bases). Use list_agents and list_datastores to find them (with an API key), ask_agent to get an answer with its sources, search_datastore to read the relevant fragments yourself.';

export function createMcpHandler(opts: ProtocolOptions): ProtocolHandler {
  /** A JSON-RPC error answer before the transport runs (no request id is known yet). */
  const refuse = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) =>
    sendJson(res, status, { jsonrpc: '2.0', error: { code: status === 401 ? -32001 : -32000, message }, id: null }, headers);

  return (req, res, pathname) => {
    if (pathname !== MCP_PATH && pathname !== `${MCP_PATH}/`) return false;
    if (req.method !== 'POST') {
      drain(req);
      // No sessions: there is no stream to open (GET) or session to end (DELETE).
      refuse(res, 405, 'This MCP server is stateless: send JSON-RPC messages with POST.', { allow: 'POST' });
      return true;
    }
    void serve(req, res).catch((err: unknown) => {
      drain(req);
      const { error, internal } = normalizeError(err);
      if (internal) opts.onInternalError(error.originalError ?? err, req);
      const status = statusOf(error.code);
      // An invalid key is refused at connect, with the challenge MCP clients expect.
      refuse(res, status, error.message, status === 401 ? { 'www-authenticate': 'Bearer' } : {});
    });
    return true;
  };

  async function serve(req: IncomingMessage, res: ServerResponse) {
    const ctx = await opts.context(req);
    const body = await readJsonBody(req, opts.bodyLimitBytes);
    const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS });
    registerTools(server, ctx, req, opts.onInternalError);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}
