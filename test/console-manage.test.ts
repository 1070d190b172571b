/**
 * The console's management pages as a new user goes through them in a real browser: sign up with
 * the form, read the organization's limits and usage, create an API key (shown once, copied),
 * revoke it, create an agent, edit its fields, share a public one, delete it. Every page is held
 * to axe, and to no console error, failed request or request to another host.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { accessibilityProblems, assertConsoleBuilt, expectClean, launchBrowser, openPage, screenshot, type WatchedPage } from './support/browser.ts';
import { gql } from './support/client.ts';

let app: TestApp;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let context: BrowserContext;

const run = Date.now().toString(36);
const email = `manage.${run}@example.test`;
const handle = `support-${run}`;

beforeAll(async () => {
  assertConsoleBuilt();
  [app, browser] = await Promise.all([startTestApp(), launchBrowser()]);
  watched = await openPage(browser, [app.url]);
  ({ page, context } = watched);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.url });
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await app?.close();
});

/** What every step must leave behind: nothing wrong that a user would see, nothing axe objects to. */
async function assertClean() {
  expect(await accessibilityProblems(page)).toEqual([]);
  expectClean(watched);
}

async function clipboard(): Promise<string> {
  // The test's types have no DOM: the page's navigator, typed as much as this needs.
  return page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText());
}

/** GraphQL as the signed-in browser (its session cookie). */
async function asBrowser(query: string, variables: Record<string, unknown> = {}) {
  const response = await page.request.post(`${app.url}/graphql`, { data: { query, variables } });
  return (await response.json()) as { data?: any; errors?: { extensions: { code: string } }[] };
}

describe('accounts', () => {
  it('signs up with the form (Email, Password, Organization) and opens on the organization with its usage', async () => {
    await page.goto(`${app.url}/`);
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByLabel('Organization').fill('Harbour Tea');
    await assertClean();
    // The browser's own check (minlength) stops a short password before the server is asked.
    await page.getByRole('button', { name: 'Sign up' }).click();
    expect(await page.getByLabel('Password').evaluate((el) => (el as unknown as { validity: { valid: boolean } }).validity.valid)).toBe(false);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('heading', { name: 'Harbour Tea' }).waitFor();
    await page.getByText(/0 of 10,000 queries this month/).waitFor();
    await assertClean();
  });

  it('shows the organization: its name (editable), its members, its limits with usage', async () => {
    await page.getByRole('link', { name: 'Organization' }).click();
    await page.getByRole('heading', { name: 'Plan limits and usage' }).waitFor();
    const row = (name: RegExp | string) => page.getByRole('row', { name });
    await expect(row(/Queries this month/).textContent()).resolves.toMatch(/0.*10,000/);
    await expect(row(/Stored tokens/).textContent()).resolves.toMatch(/0.*10,000,000/);
    await expect(row(/Pages per crawled web site/).textContent()).resolves.toContain('25');
    await expect(row(new RegExp(email.replace(/\./g, '\\.'))).textContent()).resolves.toContain('owner');
    await screenshot(page, 'organization');
    await assertClean();

    await page.getByLabel('Name').fill('Harbour Tea & Coffee');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText('Saved.').waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Plan limits and usage' }).waitFor();
    await expect(page.getByLabel('Name').inputValue()).resolves.toBe('Harbour Tea & Coffee');

    await page.getByLabel('Name').fill('   ');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('alert').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/name must be/);
    await expect(page.getByLabel('Name').getAttribute('aria-invalid')).resolves.toBe('true');
    await assertClean();
  });
});

describe('API keys', () => {
  let key = '';

  it('creates a key, shows it once in a dialog with a warning and a Copy button, and lists it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Name').fill('build server');
    await page.getByLabel('Read-only (queries, answers and reads only)').check();
    // An expiry in the past: the server's refusal appears under the field, and nothing is created.
    await page.getByLabel('Expires (optional)').fill('2020-01-01T12:00');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect(page.locator('#field-expiresAt-error').textContent()).resolves.toMatch(/future/);
    await expect(page.getByLabel('Expires (optional)').getAttribute('aria-invalid')).resolves.toBe('true');
    expect((await asBrowser('{ apiKeys { id } }')).data.apiKeys).toEqual([]);
    await assertClean();
    await page.getByLabel('Expires (optional)').fill('');
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your new API key' });
    await dialog.waitFor();
    await dialog.getByText('shown only this once').waitFor();
    key = await dialog.getByRole('textbox').inputValue();
    expect(key).toMatch(/^ak_/);
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByText('Copied.').waitFor();
    expect(await clipboard()).toBe(key);
    await assertClean();
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const row = page.getByRole('row', { name: /build server/ });
    await expect(row.textContent()).resolves.toContain(`${key.slice(0, 10)}…`);
    await expect(row.textContent()).resolves.toContain('read-only');
    await expect(row.textContent()).resolves.toContain('never');
    // The key works, read-only; once used, the list says when.
    const me = await gql(app.url, '{ me { via } }', {}, { token: key });
    expect(me.data?.me.via).toBe('apiKey');
    await page.reload();
    await row.waitFor();
    await expect(row.locator('td').nth(3).textContent()).resolves.not.toBe('never');
    // Shown once: nothing on the page holds the key any more.
    expect(await page.content()).not.toContain(key);
    await screenshot(page, 'keys');
    await assertClean();
  });

  it('revokes a key after confirmation; the key then gets 401', async () => {
    await page.getByRole('button', { name: 'Revoke build server' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.waitFor();
    await assertClean();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await gql(app.url, '{ me { via } }', {}, { token: key })).status).toBe(200);

    await page.getByRole('button', { name: 'Revoke build server' }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('row', { name: /build server/ }).getByText('Revoked').waitFor();
    await expect(page.getByRole('button', { name: 'Revoke build server' }).count()).resolves.toBe(0);
    const refused = await gql(app.url, '{ me { via } }', {}, { token: key });
    expect(refused.status).toBe(401);
    expect(refused.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    await assertClean();
  });
});

describe('agents', () => {
  let agentId = '';
  let datastoreId = '';

  it('creates an agent and edits every field; the server’s refusal is shown beside its field; a reload keeps what was saved', async () => {
    datastoreId = (await asBrowser('mutation { createDatastore(input: { name: "Tea handbook" }) { id } }')).data.createDatastore.id;
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('heading', { name: 'New agent' }).waitFor();
    await page.getByLabel('Name').fill('Helper');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'Helper', level: 1 }).waitFor();
    agentId = /#\/agents\/(.+)$/.exec(page.url())![1]!;

    await page.getByLabel('Handle').fill('Not A Handle');
    await page.getByRole('button', { name: 'Save' }).click();
    const handleError = page.locator('#field-handle-error');
    await handleError.waitFor();
    await expect(handleError.textContent()).resolves.toMatch(/handle must be/);
    await expect(page.getByLabel('Handle').getAttribute('aria-invalid')).resolves.toBe('true');
    await assertClean();

    await page.getByLabel('Name').fill('Tea expert');
    await page.getByLabel('Description').fill('Answers questions about our teas.');
    await page.getByLabel('Handle').fill(handle);
    await page.getByLabel('Model').selectOption('model_4');
    await page.getByLabel('Temperature').fill('0.4');
    await page.getByLabel('Visibility').selectOption('public');
    await page.getByLabel('System prompt').fill('You are a tea expert.');
    await page.getByLabel('User prompt').fill('Question: {query}\nContext: {context}');
    await page.getByLabel('Allowed origins').fill('https://shop.example.com\nhttp://localhost:8080');
    await page.getByLabel('Tea handbook').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();

    await page.reload();
    await page.getByRole('heading', { name: 'Tea expert', level: 1 }).waitFor();
    await expect(page.getByLabel('Description').inputValue()).resolves.toBe('Answers questions about our teas.');
    await expect(page.getByLabel('Handle').inputValue()).resolves.toBe(handle);
    await expect(page.getByLabel('Model').inputValue()).resolves.toBe('model_4');
    await expect(page.getByLabel('Temperature').inputValue()).resolves.toBe('0.4');
    await expect(page.getByLabel('Visibility').inputValue()).resolves.toBe('public');
    await expect(page.getByLabel('System prompt').inputValue()).resolves.toBe('You are a tea expert.');
    await expect(page.getByLabel('User prompt').inputValue()).resolves.toBe('Question: {query}\nContext: {context}');
    await expect(page.getByLabel('Allowed origins').inputValue()).resolves.toBe('https://shop.example.com\nhttp://localhost:8080');
    await expect(page.getByLabel('Tea handbook').isChecked()).resolves.toBe(true);
    const stored = (await asBrowser('query($id: ID!) { agent(id: $id) { name modelName temperature visibility datastoreIds allowedOrigins } }', { id: agentId })).data.agent;
    expect(stored).toEqual({ name: 'Tea expert', modelName: 'model_4', temperature: 0.4, visibility: 'public', datastoreIds: [datastoreId], allowedOrigins: ['https://shop.example.com', 'http://localhost:8080'] });
  });

  it('shows a public agent’s chat link and the widget snippet, with a Copy button', async () => {
    const snippet = `<script src="${app.url}/widget.js" data-agent="@${handle}" defer></script>`;
    await expect(page.locator('pre.snippet').textContent()).resolves.toBe(snippet);
    await expect(page.getByRole('link', { name: `${app.url}/chat/@${handle}` }).getAttribute('href')).resolves.toBe(`${app.url}/chat/@${handle}`);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await clipboard()).toBe(snippet);
    await screenshot(page, 'agent');
    await assertClean();

    await page.getByRole('link', { name: 'Agents', exact: true }).first().click();
    const row = page.getByRole('row', { name: /Tea expert/ });
    await row.waitFor();
    await expect(row.textContent()).resolves.toMatch(new RegExp(`@${handle}.*public.*model_4`));
    await screenshot(page, 'agents');
    await assertClean();
  });

  it('deletes an agent after confirmation', async () => {
    await page.getByRole('link', { name: 'Tea expert' }).click();
    await page.getByRole('button', { name: 'Delete agent' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this agent?' });
    await dialog.waitFor();
    await assertClean();
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('No agents yet.').waitFor();
    expect(page.url()).toMatch(/#\/agents$/);
    expect((await asBrowser('query($id: ID!) { agent(id: $id) { id } }', { id: agentId })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    await assertClean();
  });

  it('signs out; a browser left with a dead session cookie sees the sign-in form without a failed request', async () => {
    const session = (await context.cookies(app.url)).find((c) => c.name === 'ab_session')!;
    expect(session.httpOnly).toBe(true);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').waitFor();
    await assertClean();
    // The session sign-out revoked, put back as a stale tab or a restored profile would.
    await context.addCookies([{ name: 'ab_session', value: session.value, url: app.url }]);
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await assertClean();
  });
});
