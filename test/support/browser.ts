/**
 * Headless Debian chromium driven by playwright-core (no browser download), for the console's
 * end-to-end tests. Each page is watched for what a user would see go wrong: console errors,
 * uncaught exceptions, failed requests, and any request to a host other than the ones allowed.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCREENSHOTS = path.join(root, 'test/screenshots');

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
}

export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught exceptions, as text. */
  errors: string[];
  /** Requests that failed or answered 4xx/5xx ("GET url → 404"). */
  failed: string[];
  /** Requests to an origin other than the allowed ones. */
  foreign: string[];
}

/** A fresh context (no cookies) with one page, watched. `origins`: where its requests may go. */
export async function openPage(browser: Browser, origins: string[]): Promise<WatchedPage> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const watched: WatchedPage = { context, page, errors: [], failed: [], foreign: [] };
  watchPage(watched, page, origins);
  return watched;
}

/** Watches another page of the same context (a popup, a second tab) into the same lists. */
export function watchPage(watched: Omit<WatchedPage, 'page' | 'context'>, page: Page, origins: string[]): void {
  page.on('console', (message) => {
    if (message.type() === 'error') watched.errors.push(message.text());
  });
  page.on('pageerror', (error) => watched.errors.push(`uncaught: ${error.message}`));
  page.on('request', (request) => {
    const url = request.url();
    if (url.startsWith('data:') || url.startsWith('blob:') || url === 'about:blank') return;
    if (!origins.includes(new URL(url).origin)) watched.foreign.push(url);
  });
  page.on('requestfailed', (request) => {
    // An aborted stream (the stop button, a closed page) is the user's doing, not a failure.
    if (request.failure()?.errorText === 'net::ERR_ABORTED') return;
    watched.failed.push(`${request.method()} ${request.url()} → ${request.failure()?.errorText}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) watched.failed.push(`${response.request().method()} ${response.url()} → ${response.status()}`);
  });
}

/** What every step must leave behind: no console error, no failed request, nothing from another host. */
export function expectClean(watched: Pick<WatchedPage, 'errors' | 'failed' | 'foreign'>): void {
  expect(watched.errors).toEqual([]);
  expect(watched.failed).toEqual([]);
  expect(watched.foreign).toEqual([]);
}

/** Signs up a new organization inside the page's context: the session cookie is the browser's. */
export async function signUpIn(page: Page, baseUrl: string, organizationName = 'Acme'): Promise<{ email: string; password: string }> {
  const email = `owner.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.test`;
  const password = 'correct horse battery';
  const response = await page.request.post(`${baseUrl}/graphql`, {
    data: {
      query: 'mutation($input: SignUpInput!) { signUp(input: $input) { token } }',
      variables: { input: { email, password, organizationName } },
    },
  });
  const body = (await response.json()) as { errors?: unknown };
  if (body.errors) throw new Error(`signUp failed: ${JSON.stringify(body.errors)}`);
  return { email, password };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now ("rule: target"). */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  // evaluate() runs outside the page's CSP, which would refuse an injected script tag.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const result = await axe.run();
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => String(n.target)) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.targets.join(', ')}`);
}

/** Writes test/screenshots/<name>.png (kept out of git; the README shows some). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * Fails with how to fix it when console/dist is missing or older than the console's sources:
 * the browser tests test the build the service serves.
 */
export function assertConsoleBuilt(): void {
  const dist = path.join(root, 'console/dist/index.html');
  if (!existsSync(dist)) throw new Error('console/dist is missing: run `npm run build:console` (npm install runs it).');
  const built = statSync(dist).mtimeMs;
  const newest = newestSource(path.join(root, 'console'));
  if (newest.mtimeMs > built) throw new Error(`console/dist is older than ${path.relative(root, newest.file)}: run \`npm run build:console\`.`);
}

function newestSource(dir: string): { file: string; mtimeMs: number } {
  let newest = { file: dir, mtimeMs: 0 };
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (name.startsWith('dist')) continue;
    const file = path.join(dir, name);
    const stat = statSync(file);
    if (stat.isFile() && stat.mtimeMs > newest.mtimeMs) newest = { file, mtimeMs: stat.mtimeMs };
  }
  return newest;
}
