/**
 * Security headers on every response, set once at the top of the server chain (src/app.ts) before
 * any handler runs, so REST, GraphQL, the protocols, the docs page, errors and 404s all carry
 * them, and a handler that knows better (the docs page's and the console's pages' own
 * Content-Security-Policy, the GraphQL IDE's at GET /graphql included) replaces the default by
 * setting the same header. helmet writes them: its middleware works on plain node
 * requests and responses, which is what this chain is.
 *
 * Nothing here may be framed (`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`) except the
 * paths of FRAMEABLE_PATHS: the public chat page and the embeddable widget, which other sites
 * show in an iframe or load with a script tag. Add a path there to make it embeddable.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

/** Path prefixes other sites may frame (and load as scripts): the public chat page and the widget. */
export const FRAMEABLE_PATHS: readonly string[] = ['/chat/', '/widget'];

/**
 * The policy of every response that sets none of its own. JSON needs nothing: a response opened
 * as a page by mistake (or by an attacker's link) runs nothing and loads nothing.
 */
export const DEFAULT_CSP = "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'";

/** The same for the frameable paths; their pages set their own CSP for what they load. */
export const FRAMEABLE_CSP = "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors *";

const common = {
  referrerPolicy: { policy: 'no-referrer' as const },
  // Cross-origin isolation would stop pages of other origins from embedding anything: not ours to demand.
  crossOriginEmbedderPolicy: false,
  xPoweredBy: true,
};

const strict = helmet({
  ...common,
  contentSecurityPolicy: { useDefaults: false, directives: cspDirectives(DEFAULT_CSP) },
  xFrameOptions: { action: 'deny' },
  crossOriginResourcePolicy: { policy: 'same-origin' },
});

const frameable = helmet({
  ...common,
  contentSecurityPolicy: { useDefaults: false, directives: cspDirectives(FRAMEABLE_CSP) },
  // X-Frame-Options has no "anyone" value: left out, frame-ancestors decides.
  xFrameOptions: false,
  crossOriginResourcePolicy: { policy: 'cross-origin' },
  crossOriginOpenerPolicy: false,
});

/** Whether other sites may frame this request's path. */
export function isFrameable(url: string | undefined): boolean {
  const path = (url ?? '/').split('?')[0]!;
  return FRAMEABLE_PATHS.some((prefix) => path === prefix.replace(/\/$/, '') || path.startsWith(prefix));
}

/** Sets the default security headers of `res`; handlers run after and may replace any of them. */
export function setSecurityHeaders(req: IncomingMessage, res: ServerResponse): void {
  const headers = isFrameable(req.url) ? frameable : strict;
  // helmet's middleware is synchronous and calls `next` only to go on: nothing to wait for.
  headers(req, res, () => {});
}

/**
 * Whether the request reached us over TLS: its own socket, or a trusted proxy on loopback that says
 * so in X-Forwarded-Proto (when TRUST_PROXY_PROTO is set): the session cookie is then Secure.
 */
export function isTls(req: IncomingMessage, trustProxyProto: boolean): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  if (!trustProxyProto) return false;
  const peer = req.socket.remoteAddress;
  if (peer !== '127.0.0.1' && peer !== '::1' && peer !== '::ffff:127.0.0.1') return false;
  const proto = req.headers['x-forwarded-proto'];
  return (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase() === 'https';
}

/** "a b;c d" (as helmet writes it) as helmet's directive object. */
function cspDirectives(policy: string): Record<string, string[]> {
  return Object.fromEntries(
    policy.split(';').map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name!, values];
    }),
  );
}
