/**
 * The console's datastore and form pages in a real browser, as a person uses them: create a
 * datastore, upload two files at once through the file input and watch both reach `synched` in the
 * table without reloading (the subscription, not a reload or a poll, moves them), read a
 * document's chunks, search, add a text document, delete a datasource; create a form whose schema
 * the server refuses (the error beside the field), fix it, try it in its chat, read the submission.
 * Every page: no console error, no failed request, nothing from another host, axe clean.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { accessibilityProblems, assertConsoleBuilt, expectClean, launchBrowser, openPage, screenshot, signUpIn, type WatchedPage } from './support/browser.ts';

let app: TestApp;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let context: BrowserContext;
/** Full document loads of the page: a reload would add one. */
let loads = 0;

const ALPHA = `# Lighthouse keeping\n\nThe lighthouse keeper trims the wick of the lamp every evening and winds the clockwork that turns the lens.\n\nFog signals sound every thirty seconds when the horizon disappears.`;
const BETA = `# Harbour rules\n\nBoats moor on the north quay. The harbour master collects mooring fees on Mondays.`;

beforeAll(async () => {
  assertConsoleBuilt();
  [app, browser] = await Promise.all([startTestApp(), launchBrowser()]);
  watched = await openPage(browser, [app.url]);
  ({ page, context } = watched);
  page.on('load', () => loads++);
  await signUpIn(page, app.url, 'Lighthouse Co');
}, 60_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await app?.close();
});

async function clean(): Promise<void> {
  expect(await accessibilityProblems(page)).toEqual([]);
  expectClean(watched);
}

function row(name: string) {
  return page.getByRole('row').filter({ hasText: name });
}

/** The row's status cell once it says exactly `synched` ("unsynched" contains the word too). */
function synched(name: string) {
  return row(name).getByRole('cell', { name: 'synched', exact: true });
}

describe('datastores', () => {
  it('creates a datastore, uploads two files at once and sees both synched live, without a reload', async () => {
    await page.goto(`${app.url}/#/datastores`);
    await page.getByRole('heading', { name: 'Datastores', level: 1 }).waitFor();
    await page.getByText('No datastore yet').waitFor();
    await clean();
    await screenshot(page, 'datastores');

    await page.getByLabel('Name', { exact: true }).fill('Handbook');
    await page.getByLabel('Description').fill('How the lighthouse runs');
    await page.getByRole('button', { name: 'Create datastore' }).click();
    await page.getByRole('heading', { name: 'Handbook', level: 1 }).waitFor();
    // A mark on the document: a reload would wipe it.
    await page.evaluate(() => ((globalThis as unknown as { mark: string }).mark = 'same document'));
    expect(loads).toBe(1);

    await page.getByLabel('Files to upload').setInputFiles([
      { name: 'alpha.md', mimeType: 'text/markdown', buffer: Buffer.from(ALPHA) },
      { name: 'beta.txt', mimeType: 'text/plain', buffer: Buffer.from(BETA) },
    ]);
    // One progress bar per file, full once its bytes are sent.
    for (const name of ['alpha.md', 'beta.txt']) {
      const bar = page.getByRole('progressbar', { name: new RegExp(name) });
      await page.getByRole('listitem').filter({ hasText: `${name}: uploaded` }).waitFor();
      expect(Number(await bar.getAttribute('value'))).toBe(Number(await bar.getAttribute('max')));
    }
    for (const name of ['alpha.md', 'beta.txt']) await synched(name).waitFor({ timeout: 90_000 });
    expect(await row('alpha.md').getByRole('cell').nth(3).textContent()).toMatch(/^[1-9]\d*$/);
    expect(loads).toBe(1);
    expect(await page.evaluate(() => (globalThis as unknown as { mark?: string }).mark)).toBe('same document');
    await clean();
  }, 120_000);

  it("reads a document's chunks page by page", { timeout: 60_000 }, async () => {
    await row('alpha.md').getByRole('link', { name: 'alpha.md' }).click();
    await page.getByRole('heading', { name: 'alpha.md', level: 1 }).waitFor();
    const chunks = page.getByRole('list', { name: 'Chunks' });
    await chunks.getByText(/lighthouse keeper trims the wick/).waitFor();
    await expect(chunks.getByText(/Position 0/).count()).resolves.toBe(1);
    await page.getByText(/tokens/).first().waitFor();
    await expect(page.getByRole('button', { name: 'Next chunks' }).isDisabled()).resolves.toBe(true);
    await screenshot(page, 'chunks');
    await clean();
    await page.getByRole('link', { name: 'Datastore', exact: true }).click();
    await page.getByRole('heading', { name: 'Handbook', level: 1 }).waitFor();
  });

  it('searches the datastore and shows fragments with their score and source', { timeout: 60_000 }, async () => {
    await page.getByLabel('Search query').fill('who winds the clockwork of the lens?');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = page.getByRole('list', { name: 'Search results' });
    await results.waitFor();
    const first = results.getByRole('listitem').first();
    await expect(first.textContent()).resolves.toMatch(/Score 0\.\d{3}/);
    await expect(first.textContent()).resolves.toContain('clockwork');
    await first.getByRole('link', { name: 'alpha.md' }).waitFor();
    await screenshot(page, 'datastore');
    await clean();
  });

  it('adds a text document, re-syncs it, and deletes a datasource after confirming', async () => {
    await page.getByText('Add a text document').click();
    await page.getByLabel('Document name').fill('Tide table');
    await page.getByLabel('Text', { exact: true }).fill('High tide at 06:12 and 18:40. Low tide at 00:05 and 12:27.');
    await page.getByRole('button', { name: 'Add text document' }).click();
    await synched('Tide table').waitFor({ timeout: 60_000 });

    // Re-sync: processed again, and the row comes back to synched by itself.
    const href = await row('Tide table').getByRole('link', { name: 'Tide table' }).getAttribute('href');
    const lastSynch = async () => {
      const res = await page.request.post(`${app.url}/graphql`, { data: { query: 'query($id: ID!) { datasource(id: $id) { lastSynch } }', variables: { id: href!.split('/').pop() } } });
      return ((await res.json()) as { data: { datasource: { lastSynch: string } } }).data.datasource.lastSynch;
    };
    const before = await lastSynch();
    await page.getByRole('button', { name: 'Re-sync Tide table' }).click();
    await expect.poll(lastSynch, { timeout: 60_000 }).not.toBe(before);
    await synched('Tide table').waitFor({ timeout: 60_000 });

    await page.getByRole('button', { name: 'Delete beta.txt' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete beta.txt' });
    await dialog.getByText('Delete "beta.txt" and its chunks?').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(row('beta.txt').count()).resolves.toBe(1);
    await page.getByRole('button', { name: 'Delete beta.txt' }).click();
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await row('beta.txt').waitFor({ state: 'detached' });
    await expect(row('alpha.md').count()).resolves.toBe(1);
    expect(loads).toBe(1);
    await clean();
  }, 90_000);

  it('edits the datastore, then deletes it after confirming', { timeout: 60_000 }, async () => {
    await page.getByText('Edit datastore').click();
    await page.getByLabel('Description').fill('Keeping the light');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('main').locator('p').filter({ hasText: 'Keeping the light' }).first().waitFor();
    await page.getByRole('button', { name: 'Delete datastore' }).click();
    await page.getByRole('dialog', { name: 'Delete datastore' }).getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('heading', { name: 'Datastores', level: 1 }).waitFor();
    await page.getByText('No datastore yet').waitFor();
    await clean();
  });
});

describe('forms', () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', title: 'Your name', minLength: 2 }, age: { type: 'integer', minimum: 18, title: 'Your age' } },
    required: ['name', 'age'],
  };

  it('shows the server\'s schema error beside the field, then creates the form once it is fixed', async () => {
    await page.goto(`${app.url}/#/forms`);
    await page.getByRole('heading', { name: 'Forms', level: 1 }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Crew sign-up');
    const schemaField = page.getByLabel('JSON Schema');
    await schemaField.fill(JSON.stringify({ type: 'array', items: { type: 'string' } }));
    await page.getByRole('button', { name: 'Create form' }).click();
    const alert = page.locator('#form-schema-error');
    await expect(alert.textContent()).resolves.toMatch(/schema is not valid/i);
    await expect(alert.getAttribute('role')).resolves.toBe('alert');
    await expect(schemaField.getAttribute('aria-invalid')).resolves.toBe('true');
    await screenshot(page, 'forms');
    // The refusal is a GraphQL error the page shows: no console error, nothing else failed.
    await clean();

    await schemaField.fill(JSON.stringify(schema, null, 2));
    await page.getByRole('button', { name: 'Create form' }).click();
    await page.getByRole('heading', { name: 'Crew sign-up', level: 1 }).waitFor();
    await clean();
  });

  it('tries the form in its chat, showing the field asked and whether the answer was valid, then the submission', { timeout: 60_000 }, async () => {
    const replies = page.getByRole('log', { name: 'Form chat' }).locator('p', { hasText: 'Form:' });
    const say = async (text: string, expectField: RegExp) => {
      const before = await replies.count();
      await page.getByLabel('Message').fill(text);
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => replies.count()).toBe(before + 1);
      await expect(page.getByTestId('current-field').textContent()).resolves.toMatch(expectField);
    };
    await say('hello', /^name$/);
    await say('Ada Lovelace', /^age$/);
    await say('12', /^age$/);
    await expect(page.getByTestId('validity').textContent()).resolves.toMatch(/refused/);
    await expect(page.getByRole('log', { name: 'Form chat' }).textContent()).resolves.toMatch(/18/);
    await say('42', /complete/);
    await expect(page.getByTestId('validity').textContent()).resolves.toBe('valid');

    const submission = page.getByRole('table', { name: 'Submissions' }).getByRole('row').filter({ hasText: 'Ada Lovelace' });
    await submission.filter({ hasText: 'completed' }).waitFor();
    await expect(submission.textContent()).resolves.toContain('"age":42');
    await screenshot(page, 'form');
    await clean();
  });
});
