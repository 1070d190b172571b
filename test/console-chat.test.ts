/**
 * The playground, the conversations inbox and the public chat page in a real browser, against the
 * local OpenAI-compatible model server: an answer streams in parts with its sources, the
 * conversation continues, Stop ends the model call, a parameter reaches the model, the inbox
 * filters and reads, and an anonymous visitor chats on a public agent's page (a private one's
 * says it is not available). Every page: no console error, failed or foreign request, axe clean.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { accessibilityProblems, assertConsoleBuilt, expectClean, launchBrowser, openPage, screenshot, signUpIn, type WatchedPage } from './support/browser.ts';
import { gql, http } from './support/client.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { waitFor } from './support/wait.ts';

// Browser steps on a shared 2-core machine: a page's flow takes seconds, not milliseconds.
vi.setConfig({ testTimeout: 90_000 });

// Browser steps on a shared 2-core machine: a page's flow takes seconds, not milliseconds.
vi.setConfig({ testTimeout: 90_000 });

let app: TestApp;
let model: OpenAiTestServer;
let browser: Browser;
let console_: WatchedPage;
let key: string;
const agents = { public: '', private: '' };
const handle = `helper-${Math.random().toString(36).slice(2, 8)}`;
let datasourceId: string;

async function asUser(page: Page, query: string, variables: Record<string, unknown> = {}) {
  const response = await page.request.post(`${app.url}/graphql`, { data: { query, variables } });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const chatRequests = () => model.requests.filter((r) => r.path.endsWith('/chat/completions'));
const lastAnswer = (page: Page) => page.getByRole('log').locator('article.chat-agent').last();

async function send(page: Page, text: string) {
  await page.getByLabel('Message').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** Until the answer is complete: Send is back. */
async function answered(page: Page) {
  await page.getByRole('button', { name: 'Send' }).waitFor();
  await expect(lastAnswer(page).getAttribute('aria-busy')).resolves.toBeNull();
}

beforeAll(async () => {
  assertConsoleBuilt();
  model = await startOpenAiTestServer();
  // The echo of the test server, except for one question answered at length (for Stop).
  model.setChatReply((body: { messages: { role: string; content: unknown }[] }) => {
    const last = [...body.messages].reverse().find((m) => m.role === 'user');
    const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content);
    return text.includes('Tell me everything') ? Array.from({ length: 400 }, () => 'more').join(' ') : `You asked: ${text}`;
  });
  [app, browser] = await Promise.all([startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key', RATE_LIMIT_VISITOR_PER_MINUTE: '1000' }), launchBrowser()]);
  console_ = await openPage(browser, [app.url]);
  await signUpIn(console_.page, app.url, 'Chat Org');
  key = (await asUser(console_.page, `mutation { createApiKey(input: { name: "setup" }) { key } }`)).createApiKey.key;
  const store = (await gql(app.url, `mutation { createDatastore(input: { name: "Handbook" }) { id } }`, {}, { token: key })).data.createDatastore.id;
  const added = await http('POST', `${app.api}/datasources`, { token: key, body: { datastoreId: store, type: 'text', name: 'refunds.txt', text: 'Refunds: a purchase can be returned within 30 days for the money back.' } });
  datasourceId = added.body.id;
  await waitFor(async () => (await gql(app.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id: datasourceId }, { token: key })).data?.datasource.status === 'synched', 60_000, 'datasource synched');
  const create = async (input: Record<string, unknown>) => (await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { datastoreIds: [store], ...input } }, { token: key })).data.createAgent.id as string;
  agents.public = await create({ name: 'Helper', description: 'Answers questions about the handbook.', visibility: 'public', handle });
  agents.private = await create({ name: 'Internal', visibility: 'private', allowedOrigins: ['https://shop.example'] });
}, 120_000);

afterAll(async () => {
  await console_?.context.close();
  await browser?.close();
  await app?.close();
  await model?.close();
});

describe('the playground', () => {
  it('streams the answer in parts with its sources, and continues the conversation', async () => {
    const { page } = console_;
    model.setStreamTiming({ tokenDelayMs: 120 });
    await page.goto(`${app.url}/#/playground/${agents.public}`);
    await send(page, 'How long do refunds take?');
    // Seen while the model still writes: some text, not all of it.
    const partial = await waitFor(async () => {
      const busy = await lastAnswer(page).getAttribute('aria-busy');
      const text = (await lastAnswer(page).locator('.chat-text').textContent()) ?? '';
      return busy === 'true' && text.length > 0 ? text : undefined;
    }, 20_000, 'a partial answer');
    await answered(page);
    const full = (await lastAnswer(page).locator('.chat-text').textContent()) ?? '';
    expect(full.startsWith(partial)).toBe(true);
    expect(full.length).toBeGreaterThan(partial.length);
    expect(full).toContain('How long do refunds take?');
    const source = lastAnswer(page).getByRole('link', { name: 'refunds.txt' });
    await expect(source.getAttribute('href')).resolves.toBe(`#/datasources/${datasourceId}`);
    await lastAnswer(page).getByText('Excerpt').click();
    await lastAnswer(page).getByText('within 30 days').waitFor();

    model.setStreamTiming({ tokenDelayMs: 0 });
    await send(page, 'And for a gift?');
    await answered(page);
    const history = chatRequests().at(-1)!.body.messages.map((m: { content: unknown }) => JSON.stringify(m.content)).join('\n');
    expect(history).toContain('How long do refunds take?');
    expect(await page.getByRole('log').locator('article').count()).toBe(4);
    await screenshot(page, 'playground');
    expect(await accessibilityProblems(page)).toEqual([]);
    expectClean(console_);
  });

  it('stops a stream: the model server sees the request aborted, the answer shows it stopped', async () => {
    const { page } = console_;
    // A long answer, slow enough that the page is not flooded while Stop is pressed.
    model.setStreamTiming({ tokenDelayMs: 100 });
    const aborted = model.aborted();
    await send(page, 'Tell me everything');
    await waitFor(async () => ((await lastAnswer(page).locator('.chat-text').textContent()) ?? '').includes('more'), 20_000, 'streamed text');
    await page.getByRole('button', { name: 'Stop' }).click();
    await model.whenAborted(aborted + 1);
    await lastAnswer(page).getByText('Stopped').waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    model.setStreamTiming({ tokenDelayMs: 0 });
    expectClean(console_);
  });

  it('sends the parameters set for a question to the model', async () => {
    const { page } = console_;
    await page.getByText('Parameters').click();
    await page.getByLabel('Temperature').fill('0.7');
    await page.getByLabel('Max tokens').fill('42');
    const before = chatRequests().length;
    await send(page, 'Short answer please');
    await answered(page);
    const body = chatRequests().slice(before).at(-1)!.body;
    expect(body.temperature).toBe(0.7);
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(42);
    expect(await accessibilityProblems(page)).toEqual([]);
    // Another agent: a new conversation there (for the inbox below).
    await page.getByLabel('Agent', { exact: true }).selectOption(agents.private);
    await page.waitForURL(`**/#/playground/${agents.private}`);
    await send(page, 'Internal question');
    await answered(page);
    expectClean(console_);
  });
});

describe('the conversations inbox', () => {
  it('lists conversations newest first, filters by agent, and reads one with its sources', async () => {
    const { page } = console_;
    await page.goto(`${app.url}/#/conversations`);
    const rows = page.locator('tbody tr');
    await expect(rows.count().then(async (n) => n || (await rows.first().waitFor(), rows.count()))).resolves.toBe(2);
    await rows.first().getByRole('cell', { name: 'Internal' }).waitFor();
    await screenshot(page, 'conversations');
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel('Agent', { exact: true }).selectOption(agents.public);
    await waitFor(async () => (await rows.count()) === 1 && (await rows.first().textContent())?.includes('Helper'), 10_000, 'filtered rows');
    await rows.first().getByRole('link').click();
    await page.getByRole('heading', { name: 'Conversation' }).waitFor();
    const messages = page.getByRole('log', { name: 'Messages' }).locator('article');
    await messages.first().waitFor();
    // Two full answers, the stopped one and the one with parameters: eight messages.
    await expect(messages.count()).resolves.toBe(8);
    await expect(messages.first().textContent()).resolves.toContain('How long do refunds take?');
    await page.getByRole('link', { name: 'refunds.txt' }).first().waitFor();
    await page.getByText('Stopped').waitFor();
    await screenshot(page, 'conversation');
    expect(await accessibilityProblems(page)).toEqual([]);
    expectClean(console_);
  });
});

describe('the public chat page', () => {
  it('is framed by any site when the agent lists no origins, by its own list otherwise, and the same for private and unknown agents', async () => {
    const csp = async (path: string) => {
      const res = await fetch(`${app.url}${path}`);
      expect(res.status, path).toBe(200);
      return res.headers.get('content-security-policy') ?? '';
    };
    expect(await csp(`/chat/@${handle}`)).toContain('frame-ancestors *');
    expect(await csp(`/chat/${agents.public}`)).toContain("script-src 'self'");
    const privatePage = await csp(`/chat/${agents.private}`);
    expect(privatePage).toBe(await csp('/chat/@nobody-here'));
    expect(privatePage).not.toContain('shop.example');
    const res = await gql(app.url, `mutation($id: ID!, $o: [String!]) { updateAgent(id: $id, input: { description: "Answers questions about the handbook.", allowedOrigins: $o }) { allowedOrigins } }`, { id: agents.public, o: ['https://shop.example'] }, { token: key });
    expect(res.errors).toBeUndefined();
    // The change reaches the agent cache through the event bus.
    await waitFor(async () => (await csp(`/chat/@${handle}`)).endsWith('frame-ancestors https://shop.example'), 10_000, 'the framing list');
    // Left so: the chat below runs on the service's own page, which is not another site.
  });

  it('lets an anonymous visitor chat (the agent limited to other sites), and a reload continues the conversation', async () => {
    const visitor = await openPage(browser, [app.url]);
    try {
      const { page } = visitor;
      await page.goto(`${app.url}/chat/@${handle}`);
      await page.getByRole('heading', { name: 'Helper' }).waitFor();
      await page.getByText('Answers questions about the handbook.').waitFor();
      await expect(page.getByText('Chat Org').count()).resolves.toBe(0);
      await send(page, 'Can I return a purchase?');
      await answered(page);
      await expect(lastAnswer(page).locator('.chat-text').textContent()).resolves.toContain('Can I return a purchase?');
      // A file's name, not a link into the console.
      await lastAnswer(page).locator('.chat-sources').getByText('refunds.txt').waitFor();
      await expect(lastAnswer(page).locator('.chat-sources a').count()).resolves.toBe(0);
      await screenshot(page, 'chat-page');
      expect(await accessibilityProblems(page)).toEqual([]);

      await page.reload();
      await page.getByRole('log').locator('article').first().waitFor();
      await expect(page.getByRole('log').locator('article').first().textContent()).resolves.toContain('Can I return a purchase?');
      await send(page, 'And after 40 days?');
      await answered(page);
      expect(await page.getByRole('log').locator('article').count()).toBe(4);
      const list = await gql(app.url, `query($f: ConversationFilter) { conversations(filter: $f) { nodes { messageCount } } }`, { f: { agentId: agents.public } }, { token: key });
      expect(list.data.conversations.nodes.map((n: { messageCount: number }) => n.messageCount)).toContain(4);
      expectClean(visitor);
    } finally {
      await visitor.context.close();
    }
  });

  it('says a private or unknown agent is not available, alike', async () => {
    const visitor = await openPage(browser, [app.url]);
    try {
      const { page } = visitor;
      const texts: string[] = [];
      for (const path of [`/chat/${agents.private}`, '/chat/@nobody-here']) {
        await page.goto(`${app.url}${path}`);
        await page.getByText('This agent is not available.').waitFor();
        texts.push(await page.locator('main').innerHTML());
        expect(await accessibilityProblems(page)).toEqual([]);
      }
      expect(texts[0]).toBe(texts[1]);
      await expect(page.getByLabel('Message').count()).resolves.toBe(0);
      expectClean(visitor);
    } finally {
      await visitor.context.close();
    }
  });
});
