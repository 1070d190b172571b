/**
 * The GraphQL IDE at GET /graphql as a person opens it: GraphiQL from this service's own build
 * (nothing from a CDN, Monaco's workers included), signed in with the console's session, running
 * queries over POST /graphql and subscriptions over /graphql/stream. A GraphQL client's GET or
 * POST still reaches Apollo, whose landing page is gone; CONSOLE_ENABLED=false serves no IDE, and
 * with introspection off the IDE still opens and says the schema is unavailable.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDE_CSP, prefersHtml } from '../src/http/console.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { accessibilityProblems, assertConsoleBuilt, expectClean, launchBrowser, openPage, screenshot, signUpIn } from './support/browser.ts';
import { gql, http as request } from './support/client.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';

let app: TestApp;
/** CONSOLE_ENABLED=false. */
let off: TestApp;
/** GRAPHQL_INTROSPECTION=false. */
let closed: TestApp;
let browser: Browser;
let model: OpenAiTestServer;

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

beforeAll(async () => {
  assertConsoleBuilt();
  model = await startOpenAiTestServer();
  // Started side by side: booting them is most of this file's time.
  [app, off, closed, browser] = await Promise.all([
    startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key', MODEL_3_5_TURBO: 'gpt-ide-test' }),
    startTestApp({ CONSOLE_ENABLED: 'false' }),
    startTestApp({ GRAPHQL_INTROSPECTION: 'false' }),
    launchBrowser(),
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([app?.close(), off?.close(), closed?.close()]);
  await model?.close();
});

/** Replaces the operation editor's text as typing would, without Monaco's auto-closed brackets. */
async function setOperation(page: Page, text: string): Promise<void> {
  const editor = page.locator('.graphiql-query-editor .monaco-editor').first();
  await editor.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

/** The response pane's text: Monaco draws it as lines of spans, its spaces as no-break spaces. */
const paneText = (text: string) => text.replace(/\u00a0/g, ' ');

/** Waits until the response pane shows `pattern`; returns its text. */
async function waitForResponse(page: Page, pattern: RegExp, timeout = 30_000): Promise<string> {
  const pane = page.locator('.graphiql-response');
  const deadline = Date.now() + timeout;
  for (;;) {
    const text = paneText(await pane.innerText());
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`the response pane never showed ${pattern}; it shows:\n${text}`);
    await page.waitForTimeout(100);
  }
}

/** Waits until both editors are drawn: before that, a click on "Execute" has nowhere to show its result. */
async function waitForEditors(page: Page): Promise<void> {
  await page.locator('.graphiql-query-editor .monaco-editor').first().waitFor({ timeout: 30_000 });
  await page.locator('.graphiql-response .monaco-editor').first().waitFor({ timeout: 30_000 });
}

describe('GET /graphql over HTTP', () => {
  it('a browser gets the IDE page under its own CSP, every script a file of this server', async () => {
    const res = await fetch(`${app.url}/graphql`, { headers: { accept: HTML } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toBe(IDE_CSP);
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("worker-src 'self';");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toContain('blob:');
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).toContain('GraphQL IDE');
    expect(html).not.toMatch(/https?:\/\//);
    for (const [, attributes, body] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
      expect(attributes).toMatch(/\ssrc="\/ui\//);
      expect(body!.trim()).toBe('');
    }
  });

  it('a GraphQL client still reaches Apollo: POST, and GET asking for JSON', async () => {
    const post = await gql(app.url, '{ __typename }');
    expect(post.data).toEqual({ __typename: 'Query' });
    for (const accept of ['application/json', 'application/graphql-response+json, application/json;q=0.9', '*/*']) {
      const get = await fetch(`${app.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept, 'apollo-require-preflight': 'true' } });
      expect(get.status, accept).toBe(200);
      expect(get.headers.get('content-type'), accept).toMatch(/json/);
      expect(await get.json(), accept).toEqual({ data: { __typename: 'Query' } });
    }
  });

  it('tells a browser from a GraphQL client by what its Accept header prefers', () => {
    expect(prefersHtml(HTML)).toBe(true);
    expect(prefersHtml('text/html')).toBe(true);
    expect(prefersHtml('text/html, */*')).toBe(true);
    expect(prefersHtml(undefined)).toBe(false);
    expect(prefersHtml('*/*')).toBe(false);
    expect(prefersHtml('application/json')).toBe(false);
    expect(prefersHtml('application/json, text/html;q=0.5')).toBe(false);
    expect(prefersHtml('text/html;q=0, application/json')).toBe(false);
    expect(prefersHtml('text/html;q=nonsense')).toBe(false);
  });
});

describe('CONSOLE_ENABLED=false', () => {

  it('serves no IDE: a browser opening /graphql gets a clear JSON 4xx from Apollo, no landing page', async () => {
    const res = await request<{ errors: { message: string }[] }>('GET', `${off.url}/graphql`, { headers: { accept: HTML } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/json/);
    expect(res.body.errors[0]!.message).toBeTruthy();
    expect(JSON.stringify(res.body)).not.toMatch(/apollographql|sandbox|embeddable/i);
  });
});

describe('in a browser', () => {
  it('runs a query typed into the editor with the console\'s session, and a mutation', { timeout: 60_000 }, async () => {
    const watched = await openPage(browser, [app.url]);
    const { page, context } = watched;
    try {
      await signUpIn(page, app.url, 'Graph Works');
      // From the console's navigation, as a person finds it.
      await page.goto(`${app.url}/`);
      await page.getByRole('link', { name: 'GraphQL IDE' }).click();
      await page.waitForURL(`${app.url}/graphql`);
      await waitForEditors(page);
      // The schema arrived: the documentation explorer lists the root types.
      await page.getByRole('button', { name: /documentation explorer/i }).click();
      await page.getByText('Subscription', { exact: false }).first().waitFor({ timeout: 30_000 });
      await page.getByRole('button', { name: /documentation explorer/i }).click();

      await setOperation(page, 'query Mine { me { via organization { name } } }');
      await page.getByRole('button', { name: /execute query/i }).click();
      const text = await waitForResponse(page, /Graph Works/);
      expect(text).toContain('"via": "session"');

      await setOperation(page, 'mutation Make { createAgent(input: { name: "From the IDE" }) { id name } }');
      await page.getByRole('button', { name: /execute query/i }).click();
      await waitForResponse(page, /From the IDE/);
      const agents = await page.request.post(`${app.url}/graphql`, { data: { query: '{ agents { nodes { name } } }' } });
      expect(((await agents.json()) as { data: { agents: { nodes: { name: string }[] } } }).data.agents.nodes.map((a) => a.name)).toContain('From the IDE');

      // Laid out as a person would keep it, for the README's picture.
      await page.getByRole('button', { name: /prettify/i }).click();
      await page.locator('.graphiql-query-editor .view-line').nth(2).waitFor();
      await screenshot(page, 'graphiql');
      expect(await accessibilityProblems(page)).toEqual([]);
      expectClean(watched);
    } finally {
      await context.close();
    }
  });

  it('runs a subscription over /graphql/stream and shows its events as they arrive', { timeout: 60_000 }, async () => {
    const watched = await openPage(browser, [app.url]);
    const { page, context } = watched;
    try {
      await signUpIn(page, app.url, 'Streamers');
      const created = await page.request.post(`${app.url}/graphql`, {
        data: { query: 'mutation { createAgent(input: { name: "Tides" }) { id } }' },
      });
      const agentId = ((await created.json()) as { data: { createAgent: { id: string } } }).data.createAgent.id;
      model.setChatReply(() => 'High tide comes twice a day');
      model.setStreamTiming({ tokenDelayMs: 250 });

      const operation = `subscription Ask { agentQueryStream(id: "${agentId}", input: { query: "When is high tide?" }) { type text } }`;
      // Opened by a link, as the console's pages may link to an operation.
      await page.goto(`${app.url}/graphql?query=${encodeURIComponent(operation)}`);
      await waitForEditors(page);
      // GraphiQL shows each event in turn in the response pane: keep every version the page draws.
      await page.evaluate(`{
        const seen = (globalThis.seen = []);
        const pane = document.querySelector('.graphiql-response');
        new MutationObserver(() => seen.push(pane.innerText)).observe(pane, { subtree: true, childList: true, characterData: true });
      }`);
      const streams: string[] = [];
      page.on('request', (r) => void (r.url().endsWith('/graphql/stream') && streams.push(r.method())));
      await page.getByRole('button', { name: /execute query/i }).click();
      await waitForResponse(page, /endpoint_response/);
      const seen = await page.evaluate(() => (globalThis as unknown as { seen: string[] }).seen);
      const answers = seen.map(paneText).filter((text) => /"type": "answer"/.test(text));
      // Rendering skips frames under load: some words of the reply, not necessarily each one.
      expect(new Set(answers).size).toBeGreaterThan(1);
      expect(answers.join('\n')).toMatch(/High|tide|comes|twice|day/);
      expect(streams).toEqual(['POST']);
      expectClean(watched);
    } finally {
      model.setStreamTiming({ tokenDelayMs: 0 });
      await context.close();
    }
  });

  it('signed out, an operation that needs an account says so in the response', { timeout: 60_000 }, async () => {
    const watched = await openPage(browser, [app.url]);
    const { page, context } = watched;
    try {
      await page.goto(`${app.url}/graphql?query=${encodeURIComponent('query Mine { me { via } }')}`);
      await waitForEditors(page);
      await page.getByRole('button', { name: /execute query/i }).click();
      await waitForResponse(page, /UNAUTHENTICATED/);
      expect(watched.errors).toEqual([]);
      expect(watched.foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('GRAPHQL_INTROSPECTION=false', () => {

  it('the IDE still opens, says the schema is unavailable, and still runs queries', { timeout: 60_000 }, async () => {
    const watched = await openPage(browser, [closed.url]);
    const { page, context } = watched;
    try {
      await signUpIn(page, closed.url, 'Closed Schema');
      await page.goto(`${closed.url}/graphql?query=${encodeURIComponent('query Mine { me { organization { name } } }')}`);
      await expect(page.getByRole('status').textContent()).resolves.toMatch(/schema is unavailable/i);
      await waitForEditors(page);
      await waitForResponse(page, /schema is unavailable/i);
      await page.getByRole('button', { name: /execute query/i }).click();
      await waitForResponse(page, /Closed Schema/);
      expect(await accessibilityProblems(page)).toEqual([]);
      // The one refused introspection (400, GraphQL's validation status), asked once, and nothing else.
      expect(watched.failed).toEqual([`POST ${closed.url}/graphql → 400`]);
      expect(watched.errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
      expect(watched.foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
