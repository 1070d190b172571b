/**
 * Web ingestion keeps a page's content and drops its chrome, reads sitemaps however they are
 * spelled, and finds a site's pages through sitemaps or links. Discovery runs against a real
 * local HTTP server through safeFetch, as the worker will.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeHtml, discoverSite, extractMainContent, parseSitemap, RobotsDisallowedError } from '../src/ingestion/web.ts';
import { safeFetch } from '../src/providers/safe-fetch.ts';

const ARTICLE_PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Tidal Power Explained | Ocean Energy Weekly</title>
  <style>.x { color: red } body::before { content: "STYLE TEXT" }</style>
  <script>var trackingSentence = "SCRIPT TEXT should never appear";</script>
</head>
<body>
  <div id="cookie-banner" class="consent-overlay">
    <p>We use cookies to improve your experience. Accept all cookies to continue browsing.</p>
    <a href="/privacy#cookies">Privacy policy</a>
  </div>
  <header class="site-header">
    <a href="/"><img src="/logo.png" alt="Ocean Energy Weekly logo"></a>
    <p>Ocean Energy Weekly is the number one magazine for marine engineers.</p>
  </header>
  <nav>
    <ul>
      <li><a href="/news">Latest news from the newsroom</a></li>
      <li><a href="/archive?year=2024">Browse the complete archive</a></li>
      <li><a href="https://other.example.org/partner">Our partner network</a></li>
    </ul>
  </nav>
  <div class="layout">
    <main>
      <article>
        <h1>How tidal power works</h1>
        <p>Tidal power converts the energy of rising and falling seas into electricity. Engineers place turbines in narrow channels where the water moves fastest, and the predictable rhythm of the tides makes the output easy to forecast.</p>
        <p>Unlike wind and solar, the tides follow the moon. A tidal stream generator can therefore be scheduled years in advance, which grid operators value highly when they balance supply and demand across the network.</p>
        <img src="/turbine.jpg" alt="A tidal turbine being lowered into the sea">
        <p>The largest installation in operation today is the Sihwa Lake station in South Korea. It uses a sea wall built for flood control and produces about 552 gigawatt hours every year, enough for a mid-sized city.</p>
        <table>
          <thead><tr><th>Station</th><th>Country</th><th>Capacity</th></tr></thead>
          <tbody>
            <tr><td>Sihwa Lake</td><td>South Korea</td><td>254 MW</td></tr>
            <tr><td>La Rance</td><td>France</td><td>240 MW</td></tr>
            <tr><td>MeyGen</td><td>Scotland</td><td>6 MW</td></tr>
          </tbody>
        </table>
        <p>Costs remain the main obstacle: building in salt water is hard, and maintenance crews can only reach the turbines during short slack-water windows. Read more in <a href="/guides/marine-maintenance#slack">our maintenance guide</a>.</p>
      </article>
    </main>
    <aside class="sidebar">
      <h3>Popular this week</h3>
      <p>Sidebar teaser about offshore wind auctions that readers loved.</p>
      <a href="/offshore-wind">Offshore wind auctions</a>
    </aside>
  </div>
  <footer>
    <p>Copyright 2025 Ocean Energy Weekly. All rights reserved worldwide.</p>
    <a href="mailto:editor@example.com">Contact the editor</a>
    <a href="tel:+123456">Call us</a>
    <a href="/about">About the magazine</a>
  </footer>
</body>
</html>`;

describe('extractMainContent', () => {
  const page = extractMainContent(ARTICLE_PAGE, 'https://news.example.com/energy/tidal?ref=home#top');

  it('keeps the article, its table included', () => {
    expect(page.text).toContain('Tidal power converts the energy of rising and falling seas into electricity.');
    expect(page.text).toContain('Unlike wind and solar, the tides follow the moon.');
    expect(page.text).toContain('produces about 552 gigawatt hours every year');
    expect(page.text).toContain('Costs remain the main obstacle');
    for (const cell of ['Station', 'Country', 'Capacity', 'Sihwa Lake', 'La Rance', 'MeyGen', '254 MW', 'Scotland']) {
      expect(page.text).toContain(cell);
    }
    // Each row stays on one line, cells apart.
    expect(page.text).toMatch(/La Rance \| France \| 240 MW/);
  });

  it('keeps link text but not URLs, and no images', () => {
    expect(page.text).toContain('our maintenance guide');
    expect(page.text).not.toContain('/guides/marine-maintenance');
    expect(page.text).not.toContain('turbine.jpg');
    expect(page.text).not.toContain('lowered into the sea');
  });

  it('drops navigation, header, footer, sidebar, cookie banner, scripts and styles', () => {
    for (const chrome of [
      'We use cookies', 'Accept all cookies', 'number one magazine', 'Latest news from the newsroom',
      'complete archive', 'partner network', 'Copyright 2025', 'Contact the editor', 'Sidebar teaser',
      'Popular this week', 'SCRIPT TEXT', 'STYLE TEXT', 'trackingSentence', 'logo',
    ]) {
      expect(page.text).not.toContain(chrome);
    }
  });

  it('takes the title and keeps headings as written', () => {
    expect(page.title).toMatch(/^Tidal Power Explained/);
    expect(page.text).not.toContain('HOW TIDAL POWER WORKS');
  });

  it('writes headings as Markdown, so chunks can carry the headings above them', () => {
    const { text } = extractMainContent('<h1>Guide</h1><h2>Pricing</h2><p>Plans cost 4 dollars.</p><h3>Students</h3><p>Half price.</p>', 'https://x.example.com/g');
    // Readability may demote the page's h1 to h2; the order and nesting below it are kept.
    expect(text).toMatch(/^#{1,2} Guide\n\n## Pricing\n\nPlans cost 4 dollars\.\n\n### Students\n\nHalf price\.$/);
  });

  it('collects every http(s) link of the original page, absolute and without fragments', () => {
    expect(page.url).toBe('https://news.example.com/energy/tidal?ref=home#top');
    expect(page.links).toEqual([
      'https://news.example.com/privacy',
      'https://news.example.com/',
      'https://news.example.com/news',
      'https://news.example.com/archive?year=2024',
      'https://other.example.org/partner',
      'https://news.example.com/guides/marine-maintenance',
      'https://news.example.com/offshore-wind',
      'https://news.example.com/about',
    ]);
  });

  it('falls back to the cleaned body for short pages, and to <title>, h1 or URL for the title', () => {
    const short = extractMainContent(
      '<html><head><title>Hours</title></head><body><nav>Home | Shop</nav><div>Open 9 to 5.</div><footer>Footer note</footer></body></html>',
      'https://shop.example.com/hours',
    );
    expect(short.text).toContain('Open 9 to 5.');
    expect(short.text).not.toContain('Home | Shop');
    expect(short.text).not.toContain('Footer note');
    expect(short.title).toBe('Hours');

    const fragment = extractMainContent('<h1>Just a heading</h1><p>And a line of text.</p>', 'https://x.example.com/f');
    expect(fragment.title).toBe('Just a heading');
    expect(fragment.text).toContain('And a line of text.');

    expect(extractMainContent('<p>no title at all</p>', 'https://x.example.com/n').title).toBe('https://x.example.com/n');
  });

  it('keeps content whose wrapper merely mentions a banner', () => {
    const html = `<html><body class="cookie-consent-given"><div class="page has-banner"><main><p>${'Important body text. '.repeat(30)}</p></main></div>
      <div class="gdpr-notice">Manage your GDPR preferences here.</div></body></html>`;
    const page = extractMainContent(html, 'https://x.example.com/');
    expect(page.text).toContain('Important body text.');
    expect(page.text).not.toContain('GDPR preferences');
  });

  it('resolves links against <base href>', () => {
    const page = extractMainContent('<html><head><base href="https://cdn.example.com/docs/"></head><body><a href="intro">i</a><a href="javascript:void(0)">j</a></body></html>', 'https://x.example.com/');
    expect(page.links).toEqual(['https://cdn.example.com/docs/intro']);
  });
});

describe('decodeHtml', () => {
  it('uses the charset of the header, then of <meta>, else UTF-8', () => {
    const latin1 = Buffer.from('<p>caf\xe9</p>', 'latin1');
    expect(decodeHtml(latin1, 'text/html; charset=ISO-8859-1')).toBe('<p>café</p>');
    expect(decodeHtml(Buffer.concat([Buffer.from('<meta charset="windows-1252">'), latin1]), 'text/html')).toContain('café');
    expect(decodeHtml(Buffer.from('<p>café</p>'), null)).toBe('<p>café</p>');
    expect(decodeHtml(Buffer.from('<p>café</p>'), 'text/html; charset=nonsense')).toBe('<p>café</p>');
  });
});

describe('parseSitemap', () => {
  it('reads a urlset with namespaces, entities and whitespace', () => {
    const xml = `\uFEFF<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
    <loc>
      https://example.com/a?x=1&amp;y=2
    </loc>
    <lastmod>2024-01-01</lastmod>
    <image:image><image:loc>https://example.com/img.png</image:loc></image:image>
    <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/a"/>
  </url>
  <url><loc><![CDATA[https://example.com/2024]]></loc></url>
</urlset>`;
    expect(parseSitemap(xml)).toEqual({ urls: ['https://example.com/a?x=1&y=2', 'https://example.com/2024'], sitemaps: [] });
  });

  it('reads a single-entry urlset and a prefixed sitemapindex', () => {
    expect(parseSitemap('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/only</loc></url></urlset>'))
      .toEqual({ urls: ['https://example.com/only'], sitemaps: [] });
    const index = `<?xml version="1.0"?>
<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sm:sitemap><sm:loc>https://example.com/s1.xml</sm:loc><sm:lastmod>2024-01-01</sm:lastmod></sm:sitemap>
  <sm:sitemap><sm:loc>https://example.com/s2.xml.gz</sm:loc></sm:sitemap>
</sm:sitemapindex>`;
    expect(parseSitemap(index)).toEqual({ urls: [], sitemaps: ['https://example.com/s1.xml', 'https://example.com/s2.xml.gz'] });
  });

  it('reads text sitemaps and shrugs at HTML or garbage', () => {
    expect(parseSitemap('https://example.com/a\nhttps://example.com/b\r\n\nnot a url\n')).toEqual({
      urls: ['https://example.com/a', 'https://example.com/b'],
      sitemaps: [],
    });
    expect(parseSitemap('<html><body><h1>Not found</h1></body></html>')).toEqual({ urls: [], sitemaps: [] });
    expect(parseSitemap('<urlset><url><loc>')).toEqual({ urls: [], sitemaps: [] });
    expect(parseSitemap('')).toEqual({ urls: [], sitemaps: [] });
  });
});

/** One local server hosts several sites, told apart by path prefix. */
describe('discoverSite', () => {
  let server: http.Server;
  let origin: string;
  const hits: string[] = [];
  const fetch = (url: string) => safeFetch(url, { allowPrivate: true, timeoutMs: 3_000 });
  const html = (body: string) => `<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`;
  const urlset = (urls: string[]) =>
    `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;
  const index = (urls: string[]) =>
    `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<sitemap><loc>${u}</loc></sitemap>`).join('')}</sitemapindex>`;

  let robotsMode: 'sitemap' | 'none' | 'rules' | 'delay' = 'none';
  /** When each path was requested (ms), for Crawl-delay. */
  const times: { path: string; at: number }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      hits.push(path);
      times.push({ path, at: Date.now() });
      const send = (status: number, type: string, body: string | Buffer) => {
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      };
      // (a) an explicit index with two children, one gzipped, and itself listed to test the loop guard.
      if (path === '/a/index.xml') return send(200, 'application/xml', index([`${origin}/a/pages-1.xml`, `${origin}/a/pages-2.xml.gz`, `${origin}/a/index.xml`]));
      if (path === '/a/pages-1.xml') return send(200, 'application/xml', urlset([`${origin}/a/p1`, `${origin}/a/p2`, 'ftp://example.com/file', `${origin}/a/p1#again`]));
      if (path === '/a/pages-2.xml.gz') return send(200, 'application/gzip', gzipSync(urlset([`${origin}/a/p3`, 'https://elsewhere.example.net/p4'])));
      // (b) and (c) share the origin root: robots.txt decides which path is taken.
      if (path === '/robots.txt') {
        if (robotsMode === 'none') return send(404, 'text/plain', 'not found');
        // Our own group wins over `*`, which would keep us out of /e/ altogether.
        if (robotsMode === 'rules') {
          return send(200, 'text/plain', [
            'User-agent: *', 'Disallow: /e/', '',
            'User-agent: AgentBase-Crawler', 'Disallow: /e/secret', 'Allow: /e/secret/public', 'Disallow: /f/hidden', '',
          ].join('\n'));
        }
        if (robotsMode === 'delay') return send(200, 'text/plain', 'User-agent: *\nCrawl-delay: 3600\nDisallow: /e/secret\n');
        return send(200, 'text/plain', `User-agent: *\nDisallow: /private\n\nSitemap: /b/sitemap.xml\nsitemap:${origin}/b/missing.xml\n`);
      }
      if (path === '/b/sitemap.xml') return send(200, 'application/xml', urlset([`${origin}/b/one`, `${origin}/b/two`, 'https://other-site.example.org/x']));
      if (path === '/sitemap.xml') return send(404, 'text/html', html('<h1>Not found</h1>'));
      // (c) a small site of links.
      if (path === '/c/') {
        return send(200, 'text/html; charset=utf-8', html(`
          <a href="/c/about">About</a> <a href="/c/blog/">Blog</a> <a href="/c/about#team">Team</a>
          <a href="/c/report.pdf">Report</a> <a href="/c/logo.PNG">Logo</a> <a href="mailto:a@b.c">Mail</a>
          <a href="tel:123">Call</a> <a href="https://external.example.org/">External</a> <a href="/c/broken">Broken</a>
          <a href="/c/image">An image without extension</a>`));
      }
      if (path === '/c/about') return send(200, 'text/html', html('<a href="/c/">Home</a> <a href="/c/contact">Contact</a>'));
      if (path === '/c/blog/') return send(200, 'text/html', html('<a href="post-1">Post 1</a> <a href="./post-2?page=1">Post 2</a>'));
      if (path === '/c/contact' || path.startsWith('/c/blog/post-')) return send(200, 'text/html', html('<p>leaf</p>'));
      if (path === '/c/image') return send(200, 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      // (d) thirty pages in a chain of links, and a 30-page sitemap.
      const m = /^\/d\/page-(\d+)$/.exec(path);
      if (m) {
        const n = Number(m[1]);
        return send(200, 'text/html', html(n < 30 ? `<a href="/d/page-${n + 1}">next</a> <a href="/d/page-1">first</a>` : 'last'));
      }
      // (e) links to pages robots.txt allows and forbids; (f) a sitemap listing both.
      if (path === '/e/') return send(200, 'text/html', html('<a href="/e/open">Open</a> <a href="/e/secret">Secret</a> <a href="/e/secret/public">Public</a> <a href="/e/secret-plans">Plans</a>'));
      if (path.startsWith('/e/')) return send(200, 'text/html', html('<a href="/e/">Home</a>'));
      if (path === '/f/sitemap.xml') return send(200, 'application/xml', urlset([`${origin}/f/shown`, `${origin}/f/hidden`, `${origin}/f/hidden/deeper`, `${origin}/f/also-shown`]));
      if (path === '/d/sitemap.xml') return send(200, 'application/xml', urlset(Array.from({ length: 30 }, (_, i) => `${origin}/d/page-${i + 1}`)));
      send(404, 'text/plain', 'not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('(a) follows an explicit sitemap index into plain and gzipped sitemaps', async () => {
    hits.length = 0;
    const urls = (await discoverSite({ sitemap: `${origin}/a/index.xml`, limit: 100, fetch })).urls;
    expect(urls).toEqual([`${origin}/a/p1`, `${origin}/a/p2`, `${origin}/a/p3`, 'https://elsewhere.example.net/p4']);
    // Each sitemap read once, though the index lists itself.
    expect(hits).toEqual(['/robots.txt', '/a/index.xml', '/a/pages-1.xml', '/a/pages-2.xml.gz']);
  });

  it('(a) fails when the explicit sitemap itself cannot be read', async () => {
    await expect(discoverSite({ sitemap: `${origin}/a/nope.xml`, limit: 10, fetch })).rejects.toMatchObject({ code: 'HTTP_STATUS' });
  });

  it('(b) reads the sitemaps named by robots.txt, pages of the same site only', async () => {
    robotsMode = 'sitemap';
    hits.length = 0;
    const urls = (await discoverSite({ sourceUrl: `${origin}/b/`, limit: 10, fetch })).urls;
    expect(urls).toEqual([`${origin}/b/one`, `${origin}/b/two`]);
    expect(hits).toEqual(['/robots.txt', '/b/sitemap.xml', '/b/missing.xml']);
  });

  it('(c) walks same-site links when there is no sitemap', async () => {
    robotsMode = 'none';
    hits.length = 0;
    const urls = (await discoverSite({ sourceUrl: `${origin}/c/`, limit: 50, fetch })).urls;
    expect(urls).toEqual([
      `${origin}/c/`,
      `${origin}/c/about`,
      `${origin}/c/blog/`,
      `${origin}/c/contact`,
      `${origin}/c/blog/post-1`,
      `${origin}/c/blog/post-2?page=1`,
    ]);
    expect(hits.slice(0, 2)).toEqual(['/robots.txt', '/sitemap.xml']);
    // Non-HTML by extension is never fetched; by content type it is fetched and dropped.
    expect(hits).not.toContain('/c/report.pdf');
    expect(hits).toContain('/c/image');
  });

  it('(c) throws when the source page itself cannot be fetched', async () => {
    robotsMode = 'none';
    await expect(discoverSite({ sourceUrl: `${origin}/nowhere/`, limit: 5, fetch })).rejects.toMatchObject({ code: 'HTTP_STATUS' });
  });

  it('(d) caps the result at the limit, by links and by sitemap', async () => {
    robotsMode = 'none';
    hits.length = 0;
    const byLinks = (await discoverSite({ sourceUrl: `${origin}/d/page-1`, limit: 25, fetch })).urls;
    expect(byLinks).toEqual(Array.from({ length: 25 }, (_, i) => `${origin}/d/page-${i + 1}`));
    // Only as many pages fetched as needed to find 25 URLs.
    expect(hits.filter((h) => h.startsWith('/d/')).length).toBe(24);

    const bySitemap = (await discoverSite({ sitemap: `${origin}/d/sitemap.xml`, limit: 25, fetch })).urls;
    expect(bySitemap).toHaveLength(25);
    expect(new Set(bySitemap).size).toBe(25);
  });

  it('(e) robots.txt: our group\'s Disallow and Allow apply to the link walk, and forbidden pages are never fetched', async () => {
    robotsMode = 'rules';
    hits.length = 0;
    const urls = (await discoverSite({ sourceUrl: `${origin}/e/`, limit: 50, fetch })).urls;
    expect(urls).toEqual([`${origin}/e/`, `${origin}/e/open`, `${origin}/e/secret/public`]);
    expect(hits).not.toContain('/e/secret');
    expect(hits).not.toContain('/e/secret-plans');
    expect(hits.filter((h) => h === '/robots.txt')).toHaveLength(1);
  });

  it('(e) robots.txt for `*` applies when no group names us', async () => {
    robotsMode = 'delay';
    hits.length = 0;
    const urls = (await discoverSite({ sourceUrl: `${origin}/e/`, limit: 50, fetch, maxCrawlDelayMs: 50 })).urls;
    expect(urls).toEqual([`${origin}/e/`, `${origin}/e/open`]);
    expect(hits.some((h) => h.startsWith('/e/secret'))).toBe(false);
  });

  it('(f) pages of a sitemap that robots.txt forbids are left out', async () => {
    robotsMode = 'rules';
    expect((await discoverSite({ sitemap: `${origin}/f/sitemap.xml`, limit: 10, fetch })).urls).toEqual([`${origin}/f/shown`, `${origin}/f/also-shown`]);
    // The limit counts allowed pages only.
    expect((await discoverSite({ sitemap: `${origin}/f/sitemap.xml`, limit: 2, fetch })).urls).toEqual([`${origin}/f/shown`, `${origin}/f/also-shown`]);
  });

  it('(e) a source page that robots.txt forbids stops the crawl with a reason', async () => {
    robotsMode = 'rules';
    hits.length = 0;
    const crawl = discoverSite({ sourceUrl: `${origin}/e/secret`, limit: 5, fetch });
    await expect(crawl).rejects.toBeInstanceOf(RobotsDisallowedError);
    await expect(crawl).rejects.toThrow(`The site's robots.txt does not allow crawlers to read ${origin}/e/secret.`);
    expect(hits).not.toContain('/e/secret');
  });

  it('(g) Crawl-delay spaces our requests to the site, capped, and is reported for the pages', async () => {
    robotsMode = 'delay';
    times.length = 0;
    const started = Date.now();
    const site = await discoverSite({ sourceUrl: `${origin}/e/`, limit: 50, fetch, maxCrawlDelayMs: 300 });
    expect(site.urls).toEqual([`${origin}/e/`, `${origin}/e/open`]);
    // 3600 s asked, 300 ms given: between every two requests after robots.txt (sitemap.xml, /e/, /e/open).
    expect(site.crawlDelayMs).toEqual(new Map([[origin, 300]]));
    const after = times.filter((t) => t.path !== '/robots.txt').map((t) => t.at);
    expect(after).toHaveLength(3);
    for (let i = 1; i < after.length; i++) expect(after[i]! - after[i - 1]!).toBeGreaterThanOrEqual(280);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('without a Crawl-delay nothing waits', async () => {
    robotsMode = 'rules';
    const site = await discoverSite({ sourceUrl: `${origin}/e/`, limit: 50, fetch });
    expect(site.crawlDelayMs).toEqual(new Map([[origin, 0]]));
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await expect(discoverSite({ sourceUrl: `${origin}/c/`, limit: 5, fetch, signal: controller.signal })).rejects.toThrow('cancelled');
  });
});
