import { Readability } from '@mozilla/readability';
import { XMLParser } from 'fast-xml-parser';
import { compile, type FormatCallback } from 'html-to-text';
import { parseHTML } from 'linkedom';
import robotsParserModule from 'robots-parser';
import { setTimeout as sleep } from 'node:timers/promises';
import { magic } from '../files/file-types.ts';
import { gunzipFile } from '../providers/decompress.ts';
import { DEFAULT_USER_AGENT } from '../providers/safe-fetch.ts';
import { markdownHeading } from './loaders/common.ts';

/**
 * Web pages and web sites for ingestion: the readable text of one page, and the list of pages
 * of a site (sitemaps, or same-site links). No network of its own: the caller injects `fetch`,
 * normally safeFetch with the deployment's private-address policy.
 */

// ---------------------------------------------------------------------------------------------
// One page
// ---------------------------------------------------------------------------------------------

export interface ExtractedPage {
  title: string;
  text: string;
  url: string;
  /** Every http(s) link of the original document, absolute, without fragment, deduplicated. */
  links: string[];
}

// linkedom's types are its own classes, not lib.dom's; the DOM surface used here is small.
type Doc = ReturnType<typeof parseHTML>['document'];
type El = ReturnType<Doc['createElement']>;

/** Chrome that is never the page's content, wherever it is. */
const ALWAYS_REMOVE = [
  'script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas',
  'button', 'select', 'input', 'textarea', 'dialog',
  'nav', 'aside', '[role=navigation]', '[role=complementary]', '[role=search]',
  '[hidden]', '[aria-hidden=true]',
].join(',');
/**
 * Site headers and footers. Inside an <article> or <main> these are the article's own header
 * (title, byline) and footer, which belong to the content, so only page-level ones go.
 */
const PAGE_CHROME = 'header, footer, [role=banner], [role=contentinfo]';
const CONTENT_ROOTS = 'article, main, [role=main]';
const BANNER_PATTERN = /cookie|consent|gdpr|banner/i;

const heading = (selector: string) => ({ selector, format: 'markdownHeading' });

/**
 * One line per table row with cells separated by " | ": rows stay whole for chunking, and no
 * column padding or wrapping (html-to-text's data tables wrap long cells across lines).
 */
const tableCell: FormatCallback = (elem, walk, builder) => {
  const siblings = elem.parent?.children ?? [];
  const index = siblings.indexOf(elem);
  if (siblings.slice(0, index).some((s) => s.type === 'tag' && (s.name === 'td' || s.name === 'th'))) {
    builder.addInline(' | ', { noWordTransform: true });
  }
  walk(elem.children, builder);
};

const toText = compile({
  wordwrap: false,
  formatters: { tableCell, markdownHeading },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'table', format: 'block', options: { leadingLineBreaks: 2, trailingLineBreaks: 2 } },
    { selector: 'tr', format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    { selector: 'td', format: 'tableCell' },
    { selector: 'th', format: 'tableCell' },
    heading('h1'), heading('h2'), heading('h3'), heading('h4'), heading('h5'), heading('h6'),
  ],
});

export function extractMainContent(html: string, url: string): ExtractedPage {
  const document = parseDocument(html, url);
  const links = collectLinks(document, url);
  const titleTag = squash(document.querySelector('title')?.textContent);
  const firstH1 = squash(document.querySelector('h1')?.textContent);

  clean(document);
  const body = document.body;
  // Readability rewrites the document it reads, so the fallback is taken first.
  const cleanedBody = body ? body.innerHTML : '';

  let article: ReturnType<Readability['parse']> = null;
  try {
    article = new Readability(document as never).parse();
  } catch {
    // Readability throws on some malformed trees; the cleaned body is still good text.
  }
  let text = article?.content ? htmlToText(article.content) : '';
  if (!text) text = htmlToText(cleanedBody);

  const title = squash(article?.title) || titleTag || firstH1 || url;
  return { title, text, url, links };
}

function parseDocument(html: string, url: string): Doc {
  let { document } = parseHTML(html);
  // linkedom builds a fragment-rooted tree (documentElement = the first tag) from HTML without
  // <html>: give it a real skeleton so body and head exist.
  if (document.documentElement?.tagName !== 'HTML' || !document.body) {
    ({ document } = parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`));
  }
  // Readability resolves relative links against these, which linkedom leaves unset.
  const base = baseUrl(document, url);
  Object.defineProperty(document, 'documentURI', { value: url, configurable: true });
  Object.defineProperty(document, 'baseURI', { value: base, configurable: true });
  return document;
}

function baseUrl(document: Doc, url: string): string {
  const href = document.querySelector('base[href]')?.getAttribute('href');
  if (href) {
    try {
      return new URL(href, url).href;
    } catch {
      // An invalid <base> is ignored by browsers too.
    }
  }
  return url;
}

function collectLinks(document: Doc, url: string): string[] {
  const base = baseUrl(document, url);
  const links = new Set<string>();
  for (const a of document.querySelectorAll('a[href]')) {
    const link = absoluteHttpUrl(a.getAttribute('href') ?? '', base);
    if (link) links.add(link);
  }
  return [...links];
}

function absoluteHttpUrl(href: string, base: string | URL): string | null {
  let u: URL;
  try {
    u = new URL(href.trim(), base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  return u.href;
}

function clean(document: Doc): void {
  const body = document.body;
  for (const el of [...document.querySelectorAll(ALWAYS_REMOVE)]) el.remove();
  for (const el of [...document.querySelectorAll(PAGE_CHROME)]) {
    if (!el.parentElement?.closest(CONTENT_ROOTS)) el.remove();
  }
  if (!body) return;
  // Consent and banner blocks are matched by id/class, which is loose: a wrapper like
  // <body class="cookie-consent-given"> or <div class="has-banner"> around the whole page
  // must survive, so anything holding the content root or most of the text is kept.
  const bodyLength = (body.textContent ?? '').length;
  for (const el of [...body.querySelectorAll('[id], [class]')]) {
    const names = `${el.getAttribute('id') ?? ''} ${el.getAttribute('class') ?? ''}`;
    if (!BANNER_PATTERN.test(names)) continue;
    if (isContentRoot(el) || el.querySelector(CONTENT_ROOTS)) continue;
    if ((el.textContent ?? '').length > bodyLength / 2) continue;
    el.remove();
  }
}

function isContentRoot(el: El): boolean {
  return ['HTML', 'BODY', 'MAIN', 'ARTICLE'].includes(el.tagName) || el.getAttribute('role') === 'main';
}

function htmlToText(html: string): string {
  return toText(html)
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function squash(text: string | null | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}

/**
 * Decodes a fetched HTML body with the charset of its Content-Type or <meta charset>, else
 * UTF-8; an unknown charset label falls back to UTF-8 rather than failing the page.
 */
export function decodeHtml(body: Buffer, contentType: string | null): string {
  const fromHeader = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
  const head = body.subarray(0, 2048).toString('latin1');
  const fromMeta = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  for (const label of [fromHeader, fromMeta]) {
    if (!label) continue;
    try {
      return new TextDecoder(label).decode(body);
    } catch {
      // Unknown label: try the next source.
    }
  }
  return new TextDecoder('utf-8').decode(body);
}

// ---------------------------------------------------------------------------------------------
// Sitemaps
// ---------------------------------------------------------------------------------------------

export interface SitemapContent {
  /** <loc> of each <url> of a urlset. */
  urls: string[];
  /** <loc> of each <sitemap> of a sitemapindex. */
  sitemaps: string[];
}

const sitemapParser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  // URLs like .../2024 must stay strings.
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => name === 'url' || name === 'sitemap',
});

/**
 * Reads a urlset or a sitemapindex, whatever their namespace prefixes. A body that is not XML
 * is read as a text sitemap (one URL per line, also allowed by sitemaps.org). Anything
 * unreadable (an HTML "not found" page served as 200, say) gives empty lists, not an error.
 */
export function parseSitemap(xml: string): SitemapContent {
  const content = xml.replace(/^\uFEFF/, '').trim();
  if (!content.startsWith('<')) {
    const urls = content.split(/\r?\n/).map((l) => l.trim()).filter((l) => /^https?:\/\/\S+$/i.test(l));
    return { urls, sitemaps: [] };
  }
  let doc: Record<string, unknown>;
  try {
    doc = sitemapParser.parse(content) as Record<string, unknown>;
  } catch {
    return { urls: [], sitemaps: [] };
  }
  return {
    urls: locsOf((doc.urlset as Record<string, unknown> | undefined)?.url),
    sitemaps: locsOf((doc.sitemapindex as Record<string, unknown> | undefined)?.sitemap),
  };
}

function locsOf(entries: unknown): string[] {
  if (!Array.isArray(entries)) return [];
  const locs: string[] = [];
  for (const entry of entries) {
    let loc = (entry as Record<string, unknown> | null)?.loc;
    if (Array.isArray(loc)) loc = loc[0];
    if (typeof loc === 'string' && loc.trim()) locs.push(loc.trim());
  }
  return locs;
}

// ---------------------------------------------------------------------------------------------
// Site discovery
// ---------------------------------------------------------------------------------------------

export interface DiscoverOptions {
  sourceUrl?: string;
  sitemap?: string;
  limit: number;
  fetch: (url: string) => Promise<{ url: string; contentType: string | null; body: Buffer }>;
  signal?: AbortSignal;
  /** Cap on a robots.txt Crawl-delay (default MAX_CRAWL_DELAY_MS). */
  maxCrawlDelayMs?: number;
}

export interface DiscoveredSite {
  urls: string[];
  /** Per origin of the found pages, the pause its robots.txt asks between two requests (capped); 0 when none. */
  crawlDelayMs: Map<string, number>;
}

const MAX_SITEMAP_DEPTH = 3;
/** sitemaps.org caps an uncompressed sitemap at 50 MB; more from a .gz is a bomb. */
const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;
const NON_HTML_EXTENSION =
  /\.(pdf|jpe?g|png|gif|webp|avif|svg|ico|bmp|tiff?|zip|gz|tgz|bz2|xz|rar|7z|tar|mp3|mp4|m4a|m4v|avi|mov|wav|ogg|webm|mkv|flac|exe|dmg|msi|iso|apk|css|js|mjs|json|xml|rss|atom|woff2?|ttf|otf|eot|docx?|xlsx?|pptx?|odt|ods|odp|csv|txt|epub)$/i;

/**
 * The pages of a site, unique, in discovery order, at most `limit`, and the Crawl-delay of each
 * origin whose pages were found (for spacing the pages' own fetches).
 *
 * With `sitemap`: that sitemap and its nested indexes. Every http(s) page URL is kept, on any
 * host: the user chose that sitemap, and the fetcher still refuses private addresses.
 *
 * With `sourceUrl`: the origin's robots.txt `Sitemap:` lines, else its /sitemap.xml, else a
 * breadth-first walk of same-site links from sourceUrl (which comes first). Pages from these
 * discovered sitemaps, and walked links, must be on the source's site, taken as the host and
 * port with any leading "www." ignored and either scheme: sites commonly mix the two in their
 * sitemaps and links, while another host is another site. Failures to read robots.txt or a
 * sitemap fall through to the next method; a failure to fetch sourceUrl itself is thrown.
 *
 * Every fetch of discovery but robots.txt's own waits out its origin's Crawl-delay, and a page
 * that robots.txt disallows to us is neither fetched nor listed.
 * Throws RobotsDisallowedError when robots.txt disallows the source page of a link walk.
 */
export async function discoverSite(opts: DiscoverOptions): Promise<DiscoveredSite> {
  const limit = Math.floor(opts.limit);
  const robots = new Robots(opts);
  const ctx: DiscoveryContext = { limit, fetch: (url) => robots.fetch(url), robots, signal: opts.signal, visitedSitemaps: new Set() };
  const found = async (urls: string[]) => ({ urls, crawlDelayMs: await robots.delays(urls) });
  if (!(limit > 0)) return found([]);

  if (opts.sitemap) {
    return found(await readSitemaps(ctx, [requireHttpUrl(opts.sitemap, 'sitemap')], () => true, true));
  }
  if (!opts.sourceUrl) throw new TypeError('discoverSite needs a sourceUrl or a sitemap.');
  const source = new URL(requireHttpUrl(opts.sourceUrl, 'sourceUrl'));
  const site = siteKey(source);
  const onSite = (u: URL) => siteKey(u) === site;

  const robotsSitemaps = (await robots.rules(source.href)).sitemaps;
  if (robotsSitemaps.length > 0) {
    const pages = await readSitemaps(ctx, robotsSitemaps, onSite, false);
    if (pages.length > 0) return found(pages);
  }
  const conventional = new URL('/sitemap.xml', source.origin).href;
  if (!ctx.visitedSitemaps.has(conventional)) {
    const pages = await readSitemaps(ctx, [conventional], onSite, false);
    if (pages.length > 0) return found(pages);
  }
  return found(await crawlLinks(ctx, source));
}

interface DiscoveryContext {
  limit: number;
  fetch: DiscoverOptions['fetch'];
  robots: Robots;
  signal?: AbortSignal;
  visitedSitemaps: Set<string>;
}

// ---------------------------------------------------------------------------------------------
// robots.txt
// ---------------------------------------------------------------------------------------------

/** Longest pause between two requests to one origin that a robots.txt Crawl-delay gets from us. */
const MAX_CRAWL_DELAY_MS = 10_000;

/** The source page of a site crawl is one that the site's robots.txt keeps crawlers away from. */
export class RobotsDisallowedError extends Error {
  constructor(readonly url: string) {
    super(`The site's robots.txt does not allow crawlers to read ${url}.`);
    this.name = 'RobotsDisallowedError';
  }
}

interface OriginRules {
  allows(url: string): boolean;
  delayMs: number;
  /** Its Sitemap: lines, absolute. */
  sitemaps: string[];
}

// robots-parser is CommonJS (`module.exports = function`), which its types declare as a default export.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

const ALLOW_ALL: OriginRules = { allows: () => true, delayMs: 0, sitemaps: [] };

/**
 * What each origin's robots.txt says to our user agent (its group, else `*`), read once per
 * discovery, and the pacing it asks for. A robots.txt that cannot be read (missing, an error
 * status, a network failure) allows everything: most sites have none, and a broken one should
 * not stop a crawl that a user asked for.
 */
class Robots {
  private readonly origins = new Map<string, Promise<OriginRules>>();
  private readonly lastRequest = new Map<string, number>();
  private readonly maxDelayMs: number;

  constructor(private readonly opts: DiscoverOptions) {
    this.maxDelayMs = opts.maxCrawlDelayMs ?? MAX_CRAWL_DELAY_MS;
  }

  rules(url: string): Promise<OriginRules> {
    const origin = new URL(url).origin;
    let rules = this.origins.get(origin);
    if (!rules) {
      rules = this.read(origin);
      this.origins.set(origin, rules);
    }
    return rules;
  }

  async allows(url: string): Promise<boolean> {
    return (await this.rules(url)).allows(url);
  }

  /** Fetches after waiting out the origin's Crawl-delay since our last request to it. */
  async fetch(url: string): Promise<Awaited<ReturnType<DiscoverOptions['fetch']>>> {
    const origin = new URL(url).origin;
    const { delayMs } = await this.rules(url);
    const wait = (this.lastRequest.get(origin) ?? -Infinity) + delayMs - Date.now();
    // Aborted while waiting: the caller's reason, as from every other step of discovery.
    if (wait > 0) await sleep(wait, undefined, { signal: this.opts.signal }).catch((err) => (this.opts.signal?.throwIfAborted(), Promise.reject(err)));
    this.lastRequest.set(origin, Date.now());
    return this.opts.fetch(url);
  }

  async delays(urls: string[]): Promise<Map<string, number>> {
    const delays = new Map<string, number>();
    for (const url of urls) {
      const origin = new URL(url).origin;
      if (!delays.has(origin)) delays.set(origin, (await this.rules(url)).delayMs);
    }
    return delays;
  }

  private async read(origin: string): Promise<OriginRules> {
    const robotsUrl = `${origin}/robots.txt`;
    // Not paced by the Crawl-delay it is about to tell: the caller's fetch itself.
    const res = await tryFetch(this.opts.fetch, this.opts.signal, robotsUrl);
    if (!res) return ALLOW_ALL;
    const parsed = robotsParser(robotsUrl, res.body.toString('utf8'));
    const seconds = Number(parsed.getCrawlDelay(DEFAULT_USER_AGENT) ?? 0);
    const sitemaps: string[] = [];
    for (const line of parsed.getSitemaps()) {
      const url = absoluteHttpUrl(line, res.url);
      if (url && !sitemaps.includes(url)) sitemaps.push(url);
    }
    return {
      // A URL of another origin is not this file's business (the parser answers undefined).
      allows: (url) => parsed.isAllowed(url, DEFAULT_USER_AGENT) !== false,
      delayMs: Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, this.maxDelayMs) : 0,
      sitemaps,
    };
  }
}

function requireHttpUrl(value: string, what: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value.trim());
  } catch {
    // Reported below with the others.
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new TypeError(`${what} must be an absolute http(s) URL.`);
  }
  url.hash = '';
  return url.href;
}

function siteKey(u: URL): string {
  return `${u.hostname.toLowerCase().replace(/^www\./, '')}:${u.port}`;
}

/** Calls fetch; a failure becomes null unless the caller aborted, which must stop everything. */
async function tryFetch(fetch: DiscoverOptions['fetch'], signal: AbortSignal | undefined, url: string) {
  signal?.throwIfAborted();
  try {
    return await fetch(url);
  } catch {
    signal?.throwIfAborted();
    return null;
  }
}

/**
 * Breadth-first over sitemaps (indexes nest at most MAX_SITEMAP_DEPTH deep, each sitemap read
 * once), collecting page URLs until the limit. Only an explicit root sitemap that cannot be
 * read is an error: the user named it, so silence would hide their mistake.
 */
async function readSitemaps(
  ctx: DiscoveryContext,
  roots: string[],
  keepPage: (u: URL) => boolean,
  rootsRequired: boolean,
): Promise<string[]> {
  const pages = new Set<string>();
  const queue = roots.map((url) => ({ url, depth: 0 }));
  while (queue.length > 0 && pages.size < ctx.limit) {
    const { url, depth } = queue.shift()!;
    if (ctx.visitedSitemaps.has(url)) continue;
    ctx.visitedSitemaps.add(url);

    let content: SitemapContent;
    let base = url;
    try {
      ctx.signal?.throwIfAborted();
      const res = await ctx.fetch(url);
      base = res.url;
      content = parseSitemap(sitemapText(res.body));
    } catch (err) {
      ctx.signal?.throwIfAborted();
      if (rootsRequired && depth === 0) throw err;
      continue;
    }
    for (const loc of content.urls) {
      const page = absoluteHttpUrl(loc, base);
      if (!page || !keepPage(new URL(page)) || pages.has(page) || !(await ctx.robots.allows(page))) continue;
      pages.add(page);
      if (pages.size >= ctx.limit) break;
    }
    if (depth < MAX_SITEMAP_DEPTH) {
      for (const loc of content.sitemaps) {
        const child = absoluteHttpUrl(loc, base);
        if (child) queue.push({ url: child, depth: depth + 1 });
      }
    }
  }
  return [...pages];
}

/** .xml.gz sitemaps arrive as gzip files, not as a Content-Encoding the fetcher undoes. */
function sitemapText(body: Buffer): string {
  if (magic.gzip(body)) {
    return gunzipFile(body, MAX_SITEMAP_BYTES).toString('utf8');
  }
  return body.toString('utf8');
}

function isHtml(res: { contentType: string | null; body: Buffer }): boolean {
  if (res.contentType) return /html/i.test(res.contentType);
  return /^\s*</.test(res.body.subarray(0, 512).toString('latin1'));
}

/**
 * Breadth-first link walk. A discovered URL counts toward the limit before it is fetched, so
 * only as many pages are fetched as needed to find `limit` URLs; pages found failing or not
 * HTML on the way are dropped. Fetches are bounded so a site of broken links cannot keep us
 * walking.
 */
async function crawlLinks(ctx: DiscoveryContext, source: URL): Promise<string[]> {
  const start = absoluteHttpUrl(source.href, source)!;
  const discovered = [start];
  const seen = new Set(discovered);
  const dropped = new Set<string>();
  const sites = new Set([siteKey(source)]);
  const maxFetches = ctx.limit * 2 + 10;

  let next = 0;
  let fetches = 0;
  while (next < discovered.length && discovered.length - dropped.size < ctx.limit && fetches < maxFetches) {
    const pageUrl = discovered[next++]!;
    fetches++;
    let page: Awaited<ReturnType<DiscoverOptions['fetch']>> | null;
    if (pageUrl === start) {
      if (!(await ctx.robots.allows(start))) throw new RobotsDisallowedError(start);
      ctx.signal?.throwIfAborted();
      page = await ctx.fetch(pageUrl);
      // A site that redirects its entry point to another host (example.com -> example.org)
      // lives on that host.
      sites.add(siteKey(new URL(page.url)));
    } else {
      page = await tryFetch(ctx.fetch, ctx.signal, pageUrl);
    }
    const finalUrl = page ? absoluteHttpUrl(page.url, pageUrl) : null;
    if (!page || !finalUrl || !isHtml(page) || !sites.has(siteKey(new URL(finalUrl)))) {
      if (pageUrl !== start) dropped.add(pageUrl);
      continue;
    }
    if (finalUrl !== pageUrl) {
      // A redirect to a page already listed would be the same page twice.
      if (seen.has(finalUrl) && pageUrl !== start) {
        dropped.add(pageUrl);
        continue;
      }
      seen.add(finalUrl);
    }

    let links: string[];
    try {
      links = collectLinks(parseDocument(decodeHtml(page.body, page.contentType), finalUrl), finalUrl);
    } catch {
      continue;
    }
    for (const link of links) {
      const u = new URL(link);
      if (seen.has(link) || !sites.has(siteKey(u)) || NON_HTML_EXTENSION.test(u.pathname)) continue;
      seen.add(link);
      if (!(await ctx.robots.allows(link))) continue;
      discovered.push(link);
    }
  }
  return discovered.filter((u) => !dropped.has(u)).slice(0, ctx.limit);
}
