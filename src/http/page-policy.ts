/** What every browser page shares: its default policy, and what a page's own policy may consult. */
import type { IncomingMessage } from 'node:http';
import type { Context } from '../graphql/context.ts';

/**
 * Scripts, styles, fonts and connections from this server only; no inline script anywhere.
 * Images may be `data:` URLs: pico.css draws its checkboxes and arrows with them.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** What a page's `csp` may consult: an anonymous request context (services, database). */
export interface PageLookup {
  context(req: IncomingMessage): Promise<Context>;
}

