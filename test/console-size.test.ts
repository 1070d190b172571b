/**
 * Size and speed of the console's first page (issue 15 item 13). Size: the JavaScript a browser
 * fetches for `/` (its script, the modules it preloads, and what they import statically), gzipped,
 * at most 200 KB; the GraphQL IDE (GraphiQL, Monaco) is its own page and never among them. Speed:
 * in a real browser, the sign-in form and the signed-in overview are usable within a bound loose
 * enough for CI (the figure this machine reaches is printed and quoted in docs/console.md).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { assertConsoleBuilt, launchBrowser, openPage, signUpIn } from './support/browser.ts';

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../console/dist');
const FIRST_PAGE_JS_LIMIT = 200 * 1024;
/** The speed bound asserted; this machine's figure is about a tenth of it (docs/console.md). */
const USABLE_WITHIN_MS = 5_000;

/** The /ui/ files a page's HTML names as scripts, preloaded modules and styles. */
function filesOfPage(html: string): { scripts: string[]; styles: string[] } {
  const scripts = [...html.matchAll(/<script\b[^>]*\ssrc="(\/ui\/[^"]+)"/g), ...html.matchAll(/<link\b[^>]*rel="modulepreload"[^>]*href="(\/ui\/[^"]+)"/g)].map((m) => m[1]!);
  const styles = [...html.matchAll(/<link\b[^>]*rel="stylesheet"[^>]*href="(\/ui\/[^"]+)"/g)].map((m) => m[1]!);
  return { scripts, styles };
}

/** Every module the scripts import statically (`import … from "./x.js"`, `import "./x.js"`), transitively. */
function withStaticImports(scripts: string[]): string[] {
  const seen = new Set<string>();
  const queue = [...scripts];
  while (queue.length) {
    const url = queue.shift()!;
    if (seen.has(url)) continue;
    seen.add(url);
    const code = readFileSync(path.join(DIST, url), 'utf8');
    for (const [, relative] of code.matchAll(/(?:\bfrom|\bimport)\s*["'](\.\/[^"']+\.js)["']/g)) queue.push(path.posix.join(path.posix.dirname(url), relative!));
  }
  return [...seen];
}

const gzipped = (url: string) => gzipSync(readFileSync(path.join(DIST, url)), { level: 9 }).length;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

describe('size of the first page', () => {
  beforeAll(() => assertConsoleBuilt());

  it('the console\'s JavaScript for `/` is at most 200 KB gzipped, and none of it is the GraphQL IDE', () => {
    const { scripts, styles } = filesOfPage(readFileSync(path.join(DIST, 'index.html'), 'utf8'));
    expect(scripts.length).toBeGreaterThan(0);
    const js = withStaticImports(scripts);
    const jsBytes = js.reduce((sum, url) => sum + gzipped(url), 0);
    const cssBytes = styles.reduce((sum, url) => sum + gzipped(url), 0);
    console.info(`console first page: JavaScript ${kb(jsBytes)} gzipped in ${js.length} files (limit ${kb(FIRST_PAGE_JS_LIMIT)}), CSS ${kb(cssBytes)} gzipped`);
    expect(jsBytes).toBeLessThanOrEqual(FIRST_PAGE_JS_LIMIT);

    // The IDE's entry and what only it loads stay off the first page.
    const ide = withStaticImports(filesOfPage(readFileSync(path.join(DIST, 'ide.html'), 'utf8')).scripts);
    const ideJs = ide.reduce((sum, url) => sum + gzipped(url), 0);
    console.info(`GraphQL IDE page (not loaded by the console): JavaScript ${kb(ideJs)} gzipped before its lazy parts and workers`);
    const ideOnly = ide.filter((url) => !js.includes(url));
    expect(ideOnly.length).toBeGreaterThan(0);
    for (const url of js) {
      const code = readFileSync(path.join(DIST, url), 'utf8');
      expect(code, url).not.toMatch(/monaco|graphiql/i);
    }
  });
});

describe('speed of the first page', () => {
  let app: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    assertConsoleBuilt();
    [app, browser] = await Promise.all([startTestApp(), launchBrowser()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  /** Milliseconds from navigation to `ready`, each run in a fresh context (no cache): the median of `runs`. */
  async function median(runs: number, visit: (page: Page) => Promise<void>, prepare?: (page: Page) => Promise<void>): Promise<{ median: number; all: number[] }> {
    const all: number[] = [];
    for (let i = 0; i < runs; i++) {
      const watched = await openPage(browser, [app.url]);
      try {
        await prepare?.(watched.page);
        const started = performance.now();
        await visit(watched.page);
        all.push(performance.now() - started);
        expect(watched.errors).toEqual([]);
        expect(watched.failed).toEqual([]);
        expect(watched.foreign).toEqual([]);
      } finally {
        await watched.context.close();
      }
    }
    const sorted = [...all].sort((a, b) => a - b);
    return { median: sorted[Math.floor(sorted.length / 2)]!, all };
  }

  it('is usable within 1 s on a quiet machine: the sign-in form, and the signed-in overview', { timeout: 90_000 }, async () => {
    // The baseline: the same browser opening a JSON answer of the same server (no script at all).
    const baseline = await median(5, async (page) => void (await page.goto(`${app.url}/healthz`)));
    const signIn = await median(5, async (page) => {
      await page.goto(`${app.url}/`);
      await page.getByLabel('Email').waitFor();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
    });
    const overview = await median(
      5,
      async (page) => {
        await page.goto(`${app.url}/`);
        await page.getByRole('heading', { name: 'Speedy' }).waitFor();
      },
      async (page) => void (await signUpIn(page, app.url, 'Speedy')),
    );
    const ms = (r: { median: number; all: number[] }) => `${r.median.toFixed(0)} ms (runs ${r.all.map((t) => t.toFixed(0)).join(', ')})`;
    console.info(`console speed, median of 5 cold loads: sign-in form usable ${ms(signIn)}; signed-in overview ${ms(overview)}; baseline JSON page ${ms(baseline)}`);
    expect(signIn.median).toBeLessThan(USABLE_WITHIN_MS);
    expect(overview.median).toBeLessThan(USABLE_WITHIN_MS);
  });
});
