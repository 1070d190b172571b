/**
 * Security headers on every kind of response, the session cookie and its lifecycle, sign-up and
 * sign-in throttled per client address, and secrets never compared with `===`.
 * Addresses are set with X-Forwarded-For (trusted from loopback), so each test has its own budget.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP } from '../rest/openapi-routes.ts';
import { DEFAULT_CSP, FRAMEABLE_PATHS } from '../src/http/security-headers.ts';
import { IDE_CSP } from '../src/http/console.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';

let app: TestApp;
let owner: Awaited<ReturnType<typeof newOrganization>>;
let agent: string;

const PASSWORD = 'correct horse battery';
const SIGN_UP = `mutation($input: SignUpInput!) { signUp(input: $input) { token } }`;
const LOGIN = `mutation($input: LoginInput!) { login(input: $input) { token } }`;
let emails = 0;
const email = () => `user${++emails}.${Date.now()}@example.test`;
const from = (ip: string, more: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...more });

/** The cookie a response sets, as attribute name (lower case) -> value. */
function sessionCookie(res: { headers: Headers }): Map<string, string> | null {
  const line = res.headers.getSetCookie().find((c) => c.startsWith('ab_session='));
  if (!line) return null;
  return new Map(line.split(';').map((part) => {
    const [k, ...v] = part.trim().split('=');
    return [k!.toLowerCase(), v.join('=')] as [string, string];
  }));
}

beforeAll(async () => {
  app = await startTestApp({ TRUST_PROXY_PROTO: 'true', RATE_LIMIT_SIGNUP_PER_HOUR: '3', RATE_LIMIT_SIGNIN_PER_MINUTE: '5' });
  owner = await newOrganization(app.url, 'Security');
  agent = (await gql(app.url, `mutation { createAgent(input: { name: "Public", visibility: public }) { id } }`, {}, { token: owner.apiKey })).data.createAgent.id;
}, 120_000);

afterAll(async () => {
  await app?.close();
});

describe('security headers', () => {
  function expectStrict(res: Response, what: string) {
    expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
    expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
    expect(res.headers.get('x-frame-options'), what).toBe('DENY');
    expect(res.headers.get('content-security-policy'), what).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get('x-powered-by'), what).toBeNull();
  }

  it('every kind of response carries them: REST, GraphQL, graphql-sse, protocols, docs, errors, 404s, preflights', async () => {
    const json = { 'content-type': 'application/json' };
    const cases: [string, () => Promise<Response>][] = [
      ['REST row', () => fetch(`${app.api}/agents/${agent}`)],
      ['REST error (bad JSON)', () => fetch(`${app.api}/agents/${agent}/query`, { method: 'POST', headers: json, body: '{' })],
      ['REST 401', () => fetch(`${app.api}/agents`, { headers: { authorization: 'Bearer ak_nope' } })],
      ['GraphQL', () => fetch(`${app.url}/graphql`, { method: 'POST', headers: json, body: JSON.stringify({ query: '{ __typename }' }) })],
      ['GraphQL 413', () => fetch(`${app.url}/graphql`, { method: 'POST', headers: json, body: JSON.stringify({ query: '{ __typename }', variables: { pad: 'x'.repeat(2_000_000) } }) })],
      ['graphql-sse', () => fetch(`${app.url}/graphql/stream`, { method: 'POST', headers: { ...json, accept: 'text/event-stream' }, body: JSON.stringify({ query: '{ __typename }' }) })],
      ['OpenAI protocol', () => fetch(`${app.url}/v1/models`)],
      ['MCP', () => fetch(`${app.url}/mcp`, { method: 'POST', headers: json, body: '{}' })],
      ['OpenAPI document', () => fetch(`${app.api}/openapi.json`)],
      ['docs asset', () => fetch(`${app.api}/docs/init.js`)],
      ['health', () => fetch(`${app.url}/healthz`)],
      ['404', () => fetch(`${app.url}/no/such/path`)],
      ['malformed URL', () => fetch(`${app.url}/%E0%A4%A`)],
      ['CORS preflight', () => fetch(`${app.url}/graphql`, { method: 'OPTIONS', headers: { origin: 'https://elsewhere.test', 'access-control-request-method': 'POST' } })],
    ];
    for (const [what, send] of cases) {
      const res = await send();
      await res.arrayBuffer();
      expectStrict(res, `${what} (${res.status})`);
      expect(res.headers.get('content-security-policy'), what).toBe(DEFAULT_CSP);
    }
  });

  it('an HTML page keeps the policy it sets itself: the docs page, and the GraphQL IDE', async () => {
    const docs = await fetch(`${app.api}/docs`);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    expectStrict(docs, 'docs page');
    expect(docs.headers.get('content-security-policy')).toBe(DOCS_CSP);

    const ide = await fetch(`${app.url}/graphql`, { headers: { accept: 'text/html' } });
    await ide.arrayBuffer();
    expect(ide.headers.get('content-type')).toMatch(/text\/html/);
    expectStrict(ide, 'GraphQL IDE');
    expect(ide.headers.get('content-security-policy')).toBe(IDE_CSP);
  });

  it('only the public chat page and the widget may be framed by other sites', async () => {
    expect(FRAMEABLE_PATHS).toEqual(['/chat/', '/widget']);
    for (const p of ['/chat/some-agent', '/widget', '/widget.js']) {
      const res = await fetch(`${app.url}${p}`);
      await res.arrayBuffer();
      expect(res.headers.get('x-frame-options'), p).toBeNull();
      expect(res.headers.get('content-security-policy'), p).toMatch(/frame-ancestors \*/);
      expect(res.headers.get('x-content-type-options'), p).toBe('nosniff');
    }
    // Lookalikes are not on the list.
    for (const p of ['/chatroom', '/widgets-admin/../graphql', '/api/chat/x']) {
      const res = await fetch(`${app.url}${p}`);
      await res.arrayBuffer();
      expect(res.headers.get('x-frame-options'), p).toBe('DENY');
    }
  });
});

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Lax and Path=/, and Secure only behind TLS (a trusted proxy saying https)', async () => {
    const plain = await gql(app.url, SIGN_UP, { input: { email: email(), password: PASSWORD, organizationName: 'Plain' } }, { headers: from('10.9.0.1') });
    const cookie = sessionCookie(plain)!;
    expect(cookie.get('ab_session')).toBe(plain.data.signUp.token);
    expect(cookie.has('httponly')).toBe(true);
    expect(cookie.get('samesite')).toBe('Lax');
    expect(cookie.get('path')).toBe('/');
    expect(cookie.has('secure')).toBe(false);

    const behindTls = await gql(app.url, SIGN_UP, { input: { email: email(), password: PASSWORD, organizationName: 'Tls' } }, { headers: from('10.9.0.1', { 'x-forwarded-proto': 'https' }) });
    expect(sessionCookie(behindTls)!.has('secure')).toBe(true);
  });

  it('signing in always opens a new session and ends the one the browser had; signing out ends it', async () => {
    const address = email();
    const first = await gql(app.url, SIGN_UP, { input: { email: address, password: PASSWORD, organizationName: 'Fixation' } }, { headers: from('10.9.1.1') });
    const old = first.data.signUp.token as string;
    const me = (token: string) => gql(app.url, `{ me { via } }`, {}, { token });
    expect((await me(old)).data.me.via).toBe('session');

    // A browser holding the old session (or one an attacker planted) signs in.
    const login = await gql(app.url, LOGIN, { input: { email: address, password: PASSWORD } }, { headers: from('10.9.1.1', { cookie: `ab_session=${old}` }) });
    const fresh = login.data.login.token as string;
    expect(fresh).not.toBe(old);
    expect(sessionCookie(login)!.get('ab_session')).toBe(fresh);
    expect((await me(old)).errors![0]!.extensions.code).toBe('UNAUTHENTICATED');
    expect((await me(fresh)).data.me.via).toBe('session');

    // A session id the client makes up is never adopted.
    const planted = 'st_' + 'A'.repeat(32);
    const again = await gql(app.url, LOGIN, { input: { email: address, password: PASSWORD } }, { headers: from('10.9.1.1', { cookie: `ab_session=${planted}` }) });
    expect(again.data.login.token).not.toBe(planted);
    expect((await me(planted)).errors![0]!.extensions.code).toBe('UNAUTHENTICATED');

    const out = await gql(app.url, `mutation { logout }`, {}, { token: fresh });
    expect(out.data.logout).toBe(true);
    expect(sessionCookie(out)!.get('ab_session')).toBe('');
    expect((await me(fresh)).errors![0]!.extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('sign-up and sign-in per client address', () => {
  function expectThrottled(res: { status: number; headers: Headers; errors?: { extensions: { code: string; details?: Record<string, unknown> } }[] }) {
    expect(res.status).toBe(429);
    expect(res.errors![0]!.extensions.code).toBe('RATE_LIMITED');
    const wait = res.errors![0]!.extensions.details!.retryAfterSeconds as number;
    expect(res.headers.get('retry-after')).toBe(String(wait));
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(res.headers.get('ratelimit-limit'))).toBeGreaterThan(0);
  }

  it('sign-ups: RATE_LIMIT_SIGNUP_PER_HOUR from one address, then 429; other addresses are not held', async () => {
    const users = async () => Number((await app.db.orm.em.fork().getConnection().execute('select count(*)::int as n from users'))[0].n);
    for (let i = 0; i < 3; i++) {
      const ok = await gql(app.url, SIGN_UP, { input: { email: email(), password: PASSWORD, organizationName: `Many ${i}` } }, { headers: from('10.9.2.1') });
      expect(ok.errors, JSON.stringify(ok.errors)).toBeUndefined();
      expect(ok.headers.get('ratelimit-remaining')).toBe(String(2 - i));
    }
    const before = await users();
    const refused = await gql(app.url, SIGN_UP, { input: { email: email(), password: PASSWORD, organizationName: 'One too many' } }, { headers: from('10.9.2.1') });
    expectThrottled(refused);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(60);
    expect(await users()).toBe(before);
    const elsewhere = await gql(app.url, SIGN_UP, { input: { email: email(), password: PASSWORD, organizationName: 'Elsewhere' } }, { headers: from('10.9.2.2') });
    expect(elsewhere.errors).toBeUndefined();
  });

  it('sign-ins: RATE_LIMIT_SIGNIN_PER_MINUTE from one address, whatever the email, then 429', async () => {
    for (let i = 0; i < 5; i++) {
      const wrong = await gql(app.url, LOGIN, { input: { email: `nobody${i}@example.test`, password: 'wrong-wrong' } }, { headers: from('10.9.3.1') });
      expect(wrong.errors![0]!.extensions.code).toBe('UNAUTHENTICATED');
    }
    // Even the right password waits: the address has spent its minute.
    const right = await gql(app.url, LOGIN, { input: { email: owner.email, password: PASSWORD } }, { headers: from('10.9.3.1') });
    expectThrottled(right);
    expect(Number(right.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect((await gql(app.url, LOGIN, { input: { email: owner.email, password: PASSWORD } }, { headers: from('10.9.3.2') })).data.login.token).toMatch(/^st_/);
  });
});

describe('secrets', () => {
  it('no secret, token, hash or signature is compared with === in the source (timingSafeEqual or a lookup by hash)', () => {
    const root = path.resolve(import.meta.dirname, '..');
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const full = path.join(dir, name);
        if (statSync(full).isDirectory()) walk(full);
        else if (name.endsWith('.ts')) files.push(full);
      }
    };
    walk(path.join(root, 'src'));
    walk(path.join(root, 'rest'));
    const secret = /(hash|token|secret|signature|password|digest|hmac)$/i;
    // Literals, and constants of the code (a file format's magic number) are nothing a client guesses.
    const harmless = /^(undefined|null|true|false|\d+|'[^']*'|"[^"]*"|`[^`]*`|[A-Z][A-Z0-9_]*)$/;
    const found: string[] = [];
    for (const file of files) {
      readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
        if (/^\s*(\*|\/\/)/.test(line)) return;
        // A comparison of something named like a secret that is not one says so, with the reason.
        if (/\/\/ not a secret: \S/.test(line)) return;
        for (const m of line.matchAll(/([\w.$\]\)]+)\s*[!=]==?\s*([\w.$'"`]+)/g)) {
          const [left, right] = [m[1]!.replace(/\?$/, ''), m[2]!];
          if (/^typeof\b/.test(line.slice(Math.max(0, m.index! - 7), m.index!))) continue;
          const sides = [left, right].map((s) => s.split('.').pop()!.replace(/[()\]]/g, ''));
          if (sides.some((s) => secret.test(s)) && !sides.some((s) => harmless.test(s))) found.push(`${path.relative(root, file)}:${i + 1}: ${line.trim()}`);
        }
      });
    }
    expect(found).toEqual([]);
    // The rule would see one: the comparison it looks for is found in a line written that way.
    expect('const ok = given.signature === expected'.match(/([\w.$\]\)]+)\s*[!=]==?\s*([\w.$'"`]+)/)![1]).toBe('given.signature');
  });
});
