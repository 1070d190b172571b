/**
 * The public chat page of an agent, `/chat/@handle` or `/chat/{id}` (console/chat.html): the page
 * itself is the same static file for every address, 200 whatever the agent, and asks the API for
 * the agent, which answers NOT_FOUND alike for an unknown and a private one; so neither the status
 * nor the body says whether a private agent exists.
 *
 * Its policy is the console's, except that other sites may frame it: the agent's allowed origins
 * when it lists some, else any. A private or unknown agent gets the same `*`, so the header does
 * not tell them apart either.
 */
import type { IncomingMessage } from 'node:http';
import { ANONYMOUS } from '../auth/auth.ts';
import { CONSOLE_CSP, type PageLookup } from './page-policy.ts';
import { pathnameOf } from './respond.ts';

const CHAT_PATH = /^\/chat\/([^/]{1,200})$/;

export function isChatPagePath(pathname: string): boolean {
  return CHAT_PATH.test(pathname);
}

/** CONSOLE_CSP with the frame-ancestors of this agent (src/http/security-headers.ts frames /chat/ by default). */
export async function chatPageCsp(req: IncomingMessage, lookup: PageLookup): Promise<string> {
  const ancestors = (await allowedOrigins(req, lookup).catch(() => [])).join(' ') || '*';
  return CONSOLE_CSP.replace("frame-ancestors 'none'", `frame-ancestors ${ancestors}`);
}

async function allowedOrigins(req: IncomingMessage, lookup: PageLookup): Promise<readonly string[]> {
  const raw = CHAT_PATH.exec(pathnameOf(req.url))?.[1];
  if (!raw) return [];
  const idOrHandle = decodeURIComponent(raw);
  const ctx = await lookup.context(req);
  // As an anonymous visitor sees it: a private agent is NOT_FOUND, like an unknown one.
  const agent = await ctx.services.agents.get(ctx.em, ANONYMOUS, idOrHandle);
  return agent.allowedOrigins ?? [];
}
