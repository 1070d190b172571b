/**
 * The console at `/` as a person opens it: served by the service itself from its build, under a
 * strict CSP with no inline script, nothing loaded from anywhere else; signed out it asks to sign
 * in (without a failed request), signed in it opens on the organization. CONSOLE_ENABLED=false
 * serves no page while the APIs stay.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleHandler } from '../src/http/console.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { accessibilityProblems, assertConsoleBuilt, launchBrowser, openPage, screenshot, signUpIn } from './support/browser.ts';
import { gql, http as request } from './support/client.ts';

let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  assertConsoleBuilt();
  [app, browser] = await Promise.all([startTestApp(), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe('the console page over HTTP', () => {
  it('is HTML under a strict CSP, with every script a file of this server', async () => {
    const res = await fetch(`${app.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    const html = await res.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\ssrc="\/ui\//);
      expect(body!.trim()).toBe('');
    }
    const script = /src="(\/ui\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${app.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('cache-control')).toContain('immutable');
  });

  it('answers a file the build did not write with the JSON 404', async () => {
    for (const p of ['/ui/nothing.js', '/ui/../package.json', '/ui/%2e%2e/package.json']) {
      const res = await request('GET', `${app.url}${p}`);
      expect(res.status, p).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('says how to build it when the build is missing', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'console-dist-'));
    const handler = createConsoleHandler({ enabled: true, dist: empty });
    const server = http.createServer((req, res) => void (handler(req, res) || res.writeHead(404).end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain('npm run build:console');
    } finally {
      server.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('CONSOLE_ENABLED=false', () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await startTestApp({ CONSOLE_ENABLED: 'false' });
  });
  afterAll(async () => off?.close());

  it('serves no page, and the APIs stay', async () => {
    const page = await request('GET', `${off.url}/`);
    expect(page.status).toBe(404);
    expect(page.body.error.code).toBe('NOT_FOUND');
    const html = await fetch(`${app.url}/`).then((r) => r.text());
    const script = /src="(\/ui\/[^"]+\.js)"/.exec(html)![1]!;
    expect((await fetch(`${off.url}${script}`)).status).toBe(404);
    const signUp = await gql(off.url, 'mutation($input: SignUpInput!) { signUp(input: $input) { token } }', {
      input: { email: `off.${Date.now()}@example.test`, password: 'correct horse battery', organizationName: 'Off' },
    });
    expect(signUp.data?.signUp.token).toBeTruthy();
  });
});

describe('in a browser', () => {
  it('signed out: asks to sign in, with labelled fields, no failed request and nothing from elsewhere', async () => {
    const { page, context, errors, failed, foreign } = await openPage(browser, [app.url]);
    try {
      const started = performance.now();
      await page.goto(`${app.url}/`);
      await page.getByLabel('Email').waitFor();
      const usableMs = performance.now() - started;
      console.info(`console: sign-in page usable ${usableMs.toFixed(0)} ms after navigation`);
      expect(usableMs).toBeLessThan(5000);
      await expect(page.getByRole('button', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
      await screenshot(page, 'sign-in');
      expect(await accessibilityProblems(page)).toEqual([]);
      expect(errors).toEqual([]);
      expect(failed).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('signs in with the form and opens on the organization; a wrong password says so', async () => {
    const { page, context, errors, foreign } = await openPage(browser, [app.url]);
    try {
      const { email, password } = await signUpIn(page, app.url, 'Northwind');
      await context.clearCookies();
      await page.goto(`${app.url}/`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('wrong password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toMatch(/password/i);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Northwind' }).waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Email').waitFor();
      expect(errors).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
