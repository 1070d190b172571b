/**
 * The embeddable chat widget (issue 15 items 9 and 13) as a site owner and a visitor meet it: a
 * host page on another localhost origin carries the one-line snippet; the visitor opens the chat,
 * asks, and reads the answer as it streams in, with its sources; a reload of the host page keeps
 * the conversation (kept in the host's own localStorage); an agent whose allowed origins leave the
 * host out never reaches the model and the panel says so; a host page with a strict CSP of its own
 * works when it lets our origin in for scripts and connections. Every page: no console error, no
 * failed request, requests only to the host and the service, axe clean.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleHandler } from '../src/http/console.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { accessibilityProblems, assertConsoleBuilt, launchBrowser, openPage, screenshot } from './support/browser.ts';
import { gql, http as request, newOrganization } from './support/client.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { waitFor } from './support/wait.ts';

const WIDGET_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../console/dist/widget.js');
const ANSWER = 'Returns are accepted within thirty days of purchase, with the receipt.';
const NOT_HERE = 'This assistant is not available on this site.';
const ELSEWHERE = 'https://elsewhere.example';

let model: OpenAiTestServer;
let app: TestApp;
let off: TestApp; // CONSOLE_ENABLED=false
let browser: Browser;
let site: http.Server;
let hostOrigin: string;
let org: Awaited<ReturnType<typeof newOrganization>>;
let strictAgent: string;
let changingAgent: string;

const chatRequests = () => model.requests.filter((r) => r.path.endsWith('/chat/completions'));

async function createAgent(input: Record<string, unknown>): Promise<string> {
  const res = await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { visibility: 'public', ...input } }, { token: org.apiKey });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data.createAgent.id as string;
}

/** A host page: the snippet exactly as the console shows it, on a page of another origin. */
function hostPage(agent: string, title: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1><p>A customer's own site.</p></main><script src="${app.url}/widget.js" data-agent="${agent}" defer></script></body></html>`;
}

/**
 * In-page scripts as text: this test program is typed for node, without the DOM library.
 * WIDGET is the widget's shadow root in the host page.
 */
const WIDGET = `document.querySelector('[data-agentbase-widget]').shadowRoot`;
const stored = (page: Page, key: string) => page.evaluate<Record<string, unknown> | null>(`JSON.parse(localStorage.getItem(${JSON.stringify(key)}))`);

/** Where the focus is in the widget (a control's accessible label or id), and whether the panel is open. */
const widgetState = (page: Page) =>
  page.evaluate<{ focused: string | null; panelOpen: boolean }>(`(() => {
    const root = ${WIDGET};
    const active = root.activeElement;
    return { focused: active ? active.getAttribute('aria-label') ?? active.id : null, panelOpen: !root.querySelector('[role="dialog"]').hidden };
  })()`);

beforeAll(async () => {
  assertConsoleBuilt();
  model = await startOpenAiTestServer();
  [app, off, browser] = await Promise.all([
    startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key', RATE_LIMIT_VISITOR_PER_MINUTE: '1000' }),
    startTestApp({ CONSOLE_ENABLED: 'false' }),
    launchBrowser(),
  ]);
  org = await newOrganization(app.url, 'Widget shop');
  const store = (await gql(app.url, `mutation { createDatastore(input: { name: "Policies", visibility: public }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id as string;
  const doc = await request('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'text', name: 'Returns policy', text: 'Customers may return any purchase within thirty days, with the receipt, for a full refund.' } });
  expect(doc.status, JSON.stringify(doc.body)).toBe(200);
  await waitFor(async () => (await gql(app.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id: doc.body.id }, { token: org.apiKey })).data?.datasource.status === 'synched', 60_000, 'the policy synched');
  await createAgent({ name: 'Shop helper', description: 'Questions about orders and returns', handle: 'shop-helper', datastoreIds: [store] });
  strictAgent = await createAgent({ name: 'Strict helper', datastoreIds: [store] });
  changingAgent = await createAgent({ name: 'Changing helper', handle: 'changing-helper' });
  await createAgent({ name: 'Elsewhere helper', handle: 'elsewhere-helper', allowedOrigins: [ELSEWHERE] });

  const pages: Record<string, { html: string; headers?: Record<string, string> }> = {
    '/': { html: hostPage('@shop-helper', 'Shop') },
    '/keyboard': { html: hostPage('@shop-helper', 'Keyboard') },
    '/refused': { html: hostPage('@elsewhere-helper', 'Refused') },
    '/changing': { html: hostPage('@changing-helper', 'Changing') },
    // What docs/console.md asks of a host with a strict CSP: our origin for scripts and connections, nothing for styles.
    '/strict': { html: hostPage(strictAgent, 'Strict'), headers: { 'content-security-policy': `default-src 'none'; script-src ${app.url}; connect-src ${app.url}; base-uri 'none'; form-action 'none'` } },
  };
  site = http.createServer((req, res) => {
    const page = pages[req.url ?? '/'];
    // The browser asks every site for its icon; an empty answer keeps "no failed request" about us.
    if (!page) return void res.writeHead(req.url === '/favicon.ico' ? 204 : 404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...page.headers }).end(page.html);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  hostOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  model.setChatReply(() => ANSWER);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => site?.close(resolve));
  await Promise.all([app?.close(), off?.close()]);
  await model?.close();
});

describe('/widget.js over HTTP', () => {
  it('is a script other sites may load, cached for minutes under a stable name, revalidated by ETag', async () => {
    const res = await fetch(`${app.url}/widget.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(res.headers.get('x-frame-options')).toBeNull();
    const script = await res.text();
    expect(script).not.toContain('%%AGENTBASE_REST_BASE%%');
    expect(script).toContain('/api');
    // A browser revalidating its stale copy (max-age=0, as on a reload). Node's fetch alone would
    // add `cache-control: no-cache` to a conditional request, which asks for the whole script.
    const again = await fetch(`${app.url}/widget.js`, { headers: { 'if-none-match': res.headers.get('etag')!, 'cache-control': 'max-age=0' } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const forced = await fetch(`${app.url}/widget.js`, { headers: { 'if-none-match': res.headers.get('etag')!, 'cache-control': 'no-cache' } });
    expect(forced.status).toBe(200);
    const changed = await fetch(`${app.url}/widget.js`, { headers: { 'if-none-match': '"another-version"', 'cache-control': 'max-age=0' } });
    expect(changed.status).toBe(200);
  });

  it(`weighs at most 30 KB gzipped`, () => {
    const gzipped = gzipSync(readFileSync(WIDGET_FILE), { level: 9 }).length;
    console.info(`widget: console/dist/widget.js is ${(gzipped / 1024).toFixed(1)} KB gzipped`);
    expect(gzipped).toBeLessThanOrEqual(30 * 1024);
  });

  it('names the REST base path the service was configured with; without a build it says how to make one', async () => {
    const dist = mkdtempSync(path.join(tmpdir(), 'widget-dist-'));
    const serve = async (restBasePath: string) => {
      const handler = createConsoleHandler({ enabled: true, dist, restBasePath });
      const server = http.createServer((req, res) => void (handler(req, res) || res.writeHead(404).end()));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/widget.js`);
        return { status: res.status, text: await res.text() };
      } finally {
        server.close();
      }
    };
    try {
      const missing = await serve('/api');
      expect(missing.status).toBe(503);
      expect(missing.text).toContain('npm run build:console');
      writeFileSync(path.join(dist, 'widget.js'), readFileSync(WIDGET_FILE));
      const served = await serve('/v2');
      expect(served.status).toBe(200);
      expect(served.text).toContain('/v2');
      expect(served.text).not.toContain('%%AGENTBASE_REST_BASE%%');
    } finally {
      rmSync(dist, { recursive: true, force: true });
    }
  });

  it('is not served with CONSOLE_ENABLED=false', async () => {
    const res = await request('GET', `${off.url}/widget.js`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe('on a host page of another origin', () => {
  it('opens with "Open chat", streams the answer with its sources; a reload keeps the conversation', async () => {
    const { page, context, errors, failed, foreign } = await openPage(browser, [app.url, hostOrigin]);
    try {
      await page.goto(`${hostOrigin}/`);
      await page.getByRole('button', { name: 'Open chat' }).click();
      await page.getByRole('heading', { name: 'Shop helper' }).waitFor();
      await page.getByText('Questions about orders and returns').waitFor();
      // Every state the answer passes through, as the visitor sees it.
      await page.evaluate(`(() => {
        const root = ${WIDGET};
        window.seen = [];
        new MutationObserver(() => window.seen.push([...root.querySelectorAll('.agent .text')].at(-1)?.textContent ?? '')).observe(root.querySelector('[role="log"]'), { subtree: true, childList: true, characterData: true });
      })()`);
      model.setStreamTiming({ tokenDelayMs: 30 });
      const before = chatRequests().length;
      await page.getByLabel('Message').fill('Can I return a jacket?');
      await page.getByRole('button', { name: 'Send' }).click();
      const log = page.getByRole('log');
      await log.getByText(ANSWER).waitFor();
      await log.getByText('Returns policy').waitFor();
      model.setStreamTiming({});
      const seen = await page.evaluate<string[]>('window.seen');
      expect(seen.some((text) => text.length > 0 && text.length < ANSWER.length && ANSWER.startsWith(text)), `partial answers seen: ${JSON.stringify(seen)}`).toBe(true);
      expect(chatRequests().length).toBe(before + 1);
      const saved = await stored(page, 'agentbase:@shop-helper');
      expect(saved).toMatchObject({ conversationId: expect.any(String), visitorId: expect.any(String), open: true });

      await screenshot(page, 'widget');
      expect(await accessibilityProblems(page)).toEqual([]);

      await page.reload();
      await log.getByText(ANSWER).waitFor();
      await log.getByText('Can I return a jacket?').waitFor();
      await log.getByText('Returns policy').waitFor();
      expect(chatRequests().length).toBe(before + 1);
      // The next question continues the same conversation: the model hears the first one too.
      await page.getByLabel('Message').fill('And without the receipt?');
      await page.getByRole('button', { name: 'Send' }).click();
      await waitFor(async () => (await log.getByText(ANSWER).count()) === 2, 10_000, 'the second answer');
      expect(JSON.stringify(chatRequests().at(-1)!.body.messages)).toContain('Can I return a jacket?');
      expect((await stored(page, 'agentbase:@shop-helper'))?.conversationId).toBe(saved?.conversationId);

      expect(errors).toEqual([]);
      expect(failed).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('works from the keyboard alone: Tab to the bubble, Enter, type, Enter, Escape back to the bubble', async () => {
    const { page, context, errors, failed, foreign } = await openPage(browser, [app.url, hostOrigin]);
    try {
      await page.goto(`${hostOrigin}/keyboard`);
      await page.getByRole('button', { name: 'Open chat' }).waitFor();
      await page.keyboard.press('Tab');
      expect((await widgetState(page)).focused).toBe('Open chat');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Shop helper' }).waitFor();
      await waitFor(async () => (await widgetState(page)).focused === 'message', 5_000, 'focus in the message box');
      await page.keyboard.type('Do you take returns?');
      await page.keyboard.press('Enter');
      const log = page.getByRole('log');
      await log.getByText(ANSWER).waitFor();
      expect((await widgetState(page)).focused).toBe('message');
      // Or Tab to "Send" and press Enter: the focus comes back to the message box for the next question.
      await page.keyboard.type('And exchanges?');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await waitFor(async () => (await log.getByText(ANSWER).count()) === 2, 10_000, 'the second answer');
      await waitFor(async () => (await widgetState(page)).focused === 'message', 5_000, 'focus back in the message box');
      await page.keyboard.press('Escape');
      const closed = await widgetState(page);
      expect(closed.panelOpen).toBe(false);
      expect(closed.focused).toBe('Open chat');
      expect(errors).toEqual([]);
      expect(failed).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('an agent whose allowed origins leave the host out: the panel says so and no question reaches the model', async () => {
    const { page, context, errors, failed, foreign } = await openPage(browser, [app.url, hostOrigin]);
    try {
      const before = chatRequests().length;
      await page.goto(`${hostOrigin}/refused`);
      await page.getByRole('button', { name: 'Open chat' }).click();
      await page.getByRole('status').getByText(NOT_HERE).waitFor();
      expect(await page.getByLabel('Message').isVisible()).toBe(false);
      expect(await accessibilityProblems(page)).toEqual([]);
      // Whatever a page of this origin sends, the service refuses it before the model.
      const asked = await page.evaluate(async (url) => {
        try {
          return (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'Let me in', streaming: true }) })).status;
        } catch (err) {
          return String(err);
        }
      }, `${app.api}/agents/@elsewhere-helper/query`);
      expect(asked).toMatch(/Failed to fetch/);
      expect(chatRequests().length).toBe(before);
      // The only failures are the service's refusals of this agent; nothing else went wrong.
      expect(failed.length).toBeGreaterThan(0);
      for (const f of failed) expect(f).toMatch(/\/agents\/(%40|@)elsewhere-helper/);
      for (const e of errors) expect(e).toMatch(/403|CORS policy|ERR_FAILED/);
      expect(foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("allowed origins changed while the panel is open: the question is refused at the door and the panel says so", async () => {
    const { page, context, errors, failed, foreign } = await openPage(browser, [app.url, hostOrigin]);
    try {
      await page.goto(`${hostOrigin}/changing`);
      await page.getByRole('button', { name: 'Open chat' }).click();
      await page.getByRole('heading', { name: 'Changing helper' }).waitFor();
      const changed = await gql(app.url, `mutation($id: ID!) { updateAgent(id: $id, input: { description: "", allowedOrigins: ["${ELSEWHERE}"] }) { id } }`, { id: changingAgent }, { token: org.apiKey });
      expect(changed.errors).toBeUndefined();
      const before = chatRequests().length;
      await page.getByLabel('Message').fill('Are you still there?');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByRole('status').getByText(NOT_HERE).waitFor();
      expect(chatRequests().length).toBe(before);
      expect(await page.getByLabel('Message').isVisible()).toBe(false);
      for (const f of failed) expect(f).toMatch(/\/agents\/(%40|@)?[^/]*changing-helper|\/agents\/[0-9a-f-]+\/query/);
      for (const e of errors) expect(e).toMatch(/403|CORS policy|ERR_FAILED/);
      expect(foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a host page with a strict CSP that lets our origin in for scripts and connections: styled, and it answers', async () => {
    const { page, context, errors, failed, foreign } = await openPage(browser, [app.url, hostOrigin]);
    try {
      await page.goto(`${hostOrigin}/strict`);
      const bubble = page.getByRole('button', { name: 'Open chat' });
      await bubble.waitFor();
      // Our styles apply although the page allows no style source at all (a constructable stylesheet).
      expect(await page.evaluate<string>(`getComputedStyle(${WIDGET}.querySelector('.bubble')).position`)).toBe('fixed');
      await bubble.click();
      await page.getByRole('heading', { name: 'Strict helper' }).waitFor();
      await page.getByLabel('Message').fill('Strict question');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByRole('log').getByText(ANSWER).waitFor();
      // Stored when the stream ends, just after the answer's last words.
      await waitFor(async () => typeof (await stored(page, `agentbase:${strictAgent}`))?.conversationId === 'string', 5_000, 'the conversation id stored');
      expect(await accessibilityProblems(page)).toEqual([]);
      expect(errors).toEqual([]);
      expect(failed).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
