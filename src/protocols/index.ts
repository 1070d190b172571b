/**
 * The ecosystem's protocols, each a thin adapter in its own folder: the OpenAI-compatible
 * endpoint (/v1), the MCP server (/mcp) and Dify's External Knowledge API (/dify). Framework-free
 * like the REST handler; a path none of them owns is left to the others (returns false).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProtocolHandler, ProtocolOptions } from './http.ts';
import { createDifyHandler } from './dify/handler.ts';
import { createMcpHandler } from './mcp/handler.ts';
import { createOpenAiHandler } from './openai/handler.ts';
import { pathnameOf } from '../http/respond.ts';

export function createProtocolHandler(opts: ProtocolOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const handlers: ProtocolHandler[] = [createOpenAiHandler(opts), createMcpHandler(opts), createDifyHandler(opts)];
  return (req, res) => {
    const pathname = pathnameOf(req.url);
    for (const handle of handlers) if (handle(req, res, pathname)) return true;
    return false;
  };
}
