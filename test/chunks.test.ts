/**
 * `chunks(datasourceId, first, after)`: a document's chunks in order, page by page, for its
 * organization only (a public datastore is searched by others, not read out whole), over GraphQL
 * as a client calls it. Also `Datastore.uploadPath`, where the console posts files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, newOrganization, type GqlResult } from './support/client.ts';
import { settled } from './support/ingest.ts';

let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
let datastoreId: string;
let datasourceId: string;

const CHUNKS = `query($id: ID!, $first: Int!, $after: String) {
  chunks(datasourceId: $id, first: $first, after: $after) { nodes { id text position page tokenCount section } pageInfo { endCursor hasNextPage } }
}`;

// Ten paragraphs under two headings, each longer than the smallest chunk size: several chunks.
const TEXT = ['# Harbour', ...Array.from({ length: 5 }, (_, i) => `Paragraph ${i} about the harbour and its ${'boats and ropes '.repeat(6)}end.`), '# Lighthouse', ...Array.from({ length: 5 }, (_, i) => `Paragraph ${i + 5} about the lighthouse and its ${'lamps and stairs '.repeat(6)}end.`)].join('\n\n');

beforeAll(async () => {
  app = await startTestApp();
  [org, other] = await Promise.all([newOrganization(app.url, 'Owner'), newOrganization(app.url, 'Other')]);
  const ds = await gql(app.url, `mutation { createDatastore(input: { name: "Docs", visibility: public, chunkSize: 200, chunkOverlap: 0 }) { id uploadPath } }`, {}, { token: org.apiKey });
  datastoreId = ds.data.createDatastore.id;
  expect(ds.data.createDatastore.uploadPath).toBe(`/api/external/datastores/file-upload/${datastoreId}`);
  const created = await gql(app.url, `mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id } }`, { i: { datastoreId, type: 'text', name: 'Coast', text: TEXT } }, { token: org.apiKey });
  datasourceId = created.data.createDatasource.id;
  const done = await settled(app, org.apiKey, datasourceId);
  expect(done.status).toBe('synched');
  expect(done.chunkCount).toBeGreaterThan(4);
}, 120_000);

afterAll(async () => app?.close());

describe('chunks', () => {
  it('pages through every chunk in document order, each once, with its heading and token count', async () => {
    const seen: { id: string; text: string; position: number; tokenCount: number; section: string | null }[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const res: GqlResult = await gql(app.url, CHUNKS, { id: datasourceId, first: 2, after }, { token: org.session });
      expect(res.errors).toBeUndefined();
      const { nodes, pageInfo }: { nodes: typeof seen; pageInfo: { endCursor: string | null; hasNextPage: boolean } } = res.data.chunks;
      expect(nodes.length).toBeLessThanOrEqual(2);
      seen.push(...nodes);
      pages++;
      if (!pageInfo.hasNextPage) break;
      after = pageInfo.endCursor;
    }
    const total = (await gql(app.url, `query($id: ID!) { datasource(id: $id) { chunkCount } }`, { id: datasourceId }, { token: org.apiKey })).data.datasource.chunkCount;
    expect(seen.length).toBe(total);
    expect(pages).toBe(Math.ceil(total / 2));
    expect(seen.map((c) => c.position)).toEqual(seen.map((_, i) => i));
    expect(new Set(seen.map((c) => c.id)).size).toBe(total);
    expect(seen[0]!.text).toContain('Paragraph 0');
    expect(seen.at(-1)!.text).toContain('Paragraph 9');
    expect(seen[0]!.section).toBe('Harbour');
    expect(seen.at(-1)!.section).toBe('Lighthouse');
    for (const c of seen) expect(c.tokenCount).toBe(Math.ceil(c.text.length / 4));
  });

  it('is NOT_FOUND to another organization, even for a public datastore, and asks anonymous callers to sign in', async () => {
    const stranger = await gql(app.url, CHUNKS, { id: datasourceId, first: 5 }, { token: other.apiKey });
    expect(stranger.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect(stranger.data).toBeNull();
    const anonymous = await gql(app.url, CHUNKS, { id: datasourceId, first: 5 });
    expect(anonymous.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    // The datastore itself stays public: others search it.
    const search = await gql(app.url, `query($id: ID!) { datastoreQuery(id: $id, input: { query: "lighthouse lamps" }) { text } }`, { id: datastoreId }, { token: other.apiKey });
    expect(search.data.datastoreQuery.length).toBeGreaterThan(0);
  });

  it('refuses a bad first or a cursor of another datasource with BAD_USER_INPUT naming the argument', async () => {
    for (const first of [0, 101, -1]) {
      const res = await gql(app.url, CHUNKS, { id: datasourceId, first }, { token: org.apiKey });
      expect(res.errors?.[0]?.extensions.code, String(first)).toBe('BAD_USER_INPUT');
      expect(res.errors?.[0]?.extensions.details?.field).toBe('first');
    }
    const bogus = await gql(app.url, CHUNKS, { id: datasourceId, first: 2, after: 'not-a-cursor' }, { token: org.apiKey });
    expect(bogus.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    const otherDoc = await gql(app.url, `mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id } }`, { i: { datastoreId, type: 'text', name: 'Short', text: 'A short note about tides.' } }, { token: org.apiKey });
    await settled(app, org.apiKey, otherDoc.data.createDatasource.id);
    const foreignCursor = (await gql(app.url, CHUNKS, { id: otherDoc.data.createDatasource.id, first: 1 }, { token: org.apiKey })).data.chunks.pageInfo.endCursor;
    const mixed = await gql(app.url, CHUNKS, { id: datasourceId, first: 2, after: foreignCursor }, { token: org.apiKey });
    expect(mixed.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(mixed.errors?.[0]?.extensions.details?.field).toBe('after');
  });
});
