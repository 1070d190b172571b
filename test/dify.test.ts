/**
 * Dify's External Knowledge API (POST /dify/retrieval, docs/dify.md), request by request as Dify
 * sends them: the documented request and response, its error codes, metadata_condition.
 * The real database, the local embedding model; no stand-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { waitFor } from './support/wait.ts';

let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
let store: string;
let privateStore: string;
let othersPrivate: string;
let othersPublic: string;
const ids: Record<string, string> = {};

const DOCS: { name: string; text: string; custom_id?: string; metadata?: Record<string, unknown> }[] = [
  { name: 'refunds', text: 'Customers can return any purchase within thirty days and receive their money back in full.', custom_id: 'policy-1', metadata: { category: 'billing', lang: 'en', tags: ['money', 'returns'] } },
  { name: 'invoices', text: 'Invoices are sent by email at the end of each month and can be paid by card or bank transfer.', custom_id: 'policy-2', metadata: { category: 'billing', lang: 'fr' } },
  { name: 'hours', text: 'The support desk is staffed from nine in the morning until five in the evening, Monday to Friday.', custom_id: 'info-1', metadata: { category: 'support' } },
  { name: 'parking', text: 'Visitors may leave their cars in the underground garage beneath the building free of charge.' },
];

const retrieve = (body: unknown, token: string | null = org.apiKey, headers: Record<string, string> = {}) => http('POST', `${app.url}/dify/retrieval`, { token, body, headers });
const ask = (extra: Record<string, unknown> = {}) => retrieve({ knowledge_id: store, query: 'money back for a purchase', retrieval_setting: { top_k: 10, score_threshold: 0 }, ...extra });
const names = (res: { body: { records: { title: string }[] } }) => res.body.records.map((r) => r.title).sort();

async function datastore(token: string, visibility: string) {
  return (await gql(app.url, `mutation($v: Visibility!) { createDatastore(input: { name: "KB", visibility: $v }) { id } }`, { v: visibility }, { token })).data.createDatastore.id as string;
}

beforeAll(async () => {
  app = await startTestApp();
  org = await newOrganization(app.url, 'Dify');
  other = await newOrganization(app.url, 'Other');
  store = await datastore(org.apiKey, 'private');
  privateStore = await datastore(org.apiKey, 'private');
  othersPrivate = await datastore(other.apiKey, 'private');
  othersPublic = await datastore(other.apiKey, 'public');
  for (const doc of DOCS) {
    const res = await http('POST', `${app.api}/datasources`, { token: org.apiKey, body: { datastoreId: store, type: 'text', ...doc } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids[doc.name] = res.body.id;
  }
  const theirs = await http('POST', `${app.api}/datasources`, { token: other.apiKey, body: { datastoreId: othersPublic, type: 'text', name: 'theirs', text: 'Their refund policy: money back within a week.' } });
  for (const id of [...Object.values(ids), theirs.body.id]) {
    await waitFor(async () => (await gql(app.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id }, { token: id === theirs.body.id ? other.apiKey : org.apiKey })).data?.datasource.status === 'synched', 60_000, `datasource ${id}`);
  }
}, 180_000);

afterAll(async () => {
  await app?.close();
});

describe('POST /dify/retrieval', () => {
  it('answers the documented records: content, score, title and metadata, best first', async () => {
    const res = await retrieve({ knowledge_id: store, query: 'money back for a purchase', retrieval_setting: { top_k: 2, score_threshold: 0 } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['records']);
    expect(res.body.records).toHaveLength(2);
    const [first] = res.body.records;
    expect(Object.keys(first).sort()).toEqual(['content', 'metadata', 'score', 'title']);
    expect(first).toMatchObject({ content: DOCS[0]!.text, title: 'refunds' });
    expect(first.metadata).toEqual({ source: 'refunds', datasource_id: ids.refunds, datasource_name: 'refunds', custom_id: 'policy-1', page: null, category: 'billing', lang: 'en', tags: ['money', 'returns'] });
    expect(first.score).toBeGreaterThan(0);
    expect(first.score).toBeLessThanOrEqual(1);
    const scores = res.body.records.map((r: { score: number }) => r.score);
    expect(scores).toEqual([...scores].sort((a: number, b: number) => b - a));
    // A document without custom_id or metadata still has every fixed key.
    const all = (await ask()).body.records as { title: string; metadata: Record<string, unknown> }[];
    expect(Object.keys(all.find((r) => r.title === 'parking')!.metadata).sort()).toEqual(['custom_id', 'datasource_id', 'datasource_name', 'page', 'source']);
  });

  it('score_threshold drops records scored below it', async () => {
    const all = (await ask()).body.records as { score: number }[];
    expect(all.length).toBe(4);
    const threshold = (all[0]!.score + all.at(-1)!.score) / 2;
    const some = await ask({ retrieval_setting: { top_k: 10, score_threshold: threshold } });
    expect(some.body.records.length).toBe(all.filter((r) => r.score >= threshold).length);
    expect(some.body.records.length).toBeLessThan(4);
    expect(some.body.records.every((r: { score: number }) => r.score >= threshold)).toBe(true);
  });

  it('metadata_condition: each operator on custom_id, datasource_id, source and the metadata keys', async () => {
    const cases: [unknown, string[]][] = [
      [{ conditions: [{ name: 'category', comparison_operator: 'is', value: 'billing' }] }, ['invoices', 'refunds']],
      [{ conditions: [{ name: 'category', comparison_operator: 'is not', value: 'billing' }] }, ['hours']], // parking lacks the key
      [{ conditions: [{ name: 'custom_id', comparison_operator: 'in', value: ['policy-2', 'info-1'] }] }, ['hours', 'invoices']],
      [{ conditions: [{ name: 'custom_id', comparison_operator: 'not in', value: ['policy-2', 'info-1'] }] }, ['refunds']],
      [{ conditions: [{ name: 'custom_id', comparison_operator: 'start with', value: 'policy' }] }, ['invoices', 'refunds']],
      [{ conditions: [{ name: 'custom_id', comparison_operator: 'empty' }] }, ['parking']],
      [{ conditions: [{ name: 'custom_id', comparison_operator: 'not empty' }] }, ['hours', 'invoices', 'refunds']],
      [{ conditions: [{ name: 'tags', comparison_operator: 'contains', value: 'returns' }] }, ['refunds']],
      [{ conditions: [{ name: 'source', comparison_operator: 'contains', value: 'our' }] }, ['hours']],
      [{ conditions: [{ name: 'source', comparison_operator: 'is', value: 'parking' }] }, ['parking']],
      [{ conditions: [{ name: 'datasource_id', comparison_operator: 'is', value: ids.hours }] }, ['hours']],
      [{ logical_operator: 'and', conditions: [{ name: 'category', comparison_operator: 'is', value: 'billing' }, { name: 'lang', comparison_operator: 'is', value: 'fr' }] }, ['invoices']],
      [{ logical_operator: 'or', conditions: [{ name: 'lang', comparison_operator: 'is', value: 'fr' }, { name: 'source', comparison_operator: 'is', value: 'parking' }] }, ['invoices', 'parking']],
      [{ conditions: [{ name: 'category', comparison_operator: 'is', value: 'nothing' }] }, []],
      [{ conditions: [] }, ['hours', 'invoices', 'parking', 'refunds']],
    ];
    for (const [condition, expected] of cases) {
      const res = await ask({ metadata_condition: condition });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(names(res), JSON.stringify(condition)).toEqual(expected);
    }
  });

  it('a condition on document keys still returns top_k records when that many match', async () => {
    const res = await retrieve({ knowledge_id: store, query: 'opening hours of the support desk', retrieval_setting: { top_k: 2, score_threshold: 0 }, metadata_condition: { conditions: [{ name: 'category', comparison_operator: 'is', value: 'billing' }] } });
    expect(names(res)).toEqual(['invoices', 'refunds']);
  });

  it('Authorization: 1001 when missing or malformed, 1002 when refused (403)', async () => {
    const body = { knowledge_id: store, query: 'x', retrieval_setting: { top_k: 1, score_threshold: 0 } };
    for (const headers of [{}, { authorization: org.apiKey }, { authorization: 'Basic abc' }, { authorization: 'Bearer' }] as Record<string, string>[]) {
      const res = await retrieve(body, null, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body).toEqual({ error_code: 1001, error_msg: expect.any(String) });
    }
    const refused = await retrieve(body, 'ak_not_a_real_key');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error_code: 1002, error_msg: 'Authorization failed.' });
  });

  it('2001 (404) for unknown knowledge, another organization\'s private datastore; another\'s public one answers', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id', othersPrivate]) {
      const res = await retrieve({ knowledge_id: id, query: 'x', retrieval_setting: { top_k: 1, score_threshold: 0 } });
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual({ error_code: 2001, error_msg: 'The knowledge does not exist.' });
    }
    // Not revealed either way: the same answer as an unknown id.
    const mine = await retrieve({ knowledge_id: privateStore, query: 'x', retrieval_setting: { top_k: 1, score_threshold: 0 } });
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({ records: [] });
    const theirs = await retrieve({ knowledge_id: othersPublic, query: 'refund', retrieval_setting: { top_k: 1, score_threshold: 0 } });
    expect(theirs.status).toBe(200);
    expect(theirs.body.records[0].title).toBe('theirs');
  });

  it('a malformed body is 400 and names the field', async () => {
    const good = { knowledge_id: store, query: 'x', retrieval_setting: { top_k: 1, score_threshold: 0 } };
    const cases: [unknown, string | undefined][] = [
      [{ ...good, knowledge_id: undefined }, 'knowledge_id'],
      [{ ...good, query: '' }, 'query'],
      [{ ...good, retrieval_setting: undefined }, 'retrieval_setting'],
      [{ ...good, retrieval_setting: { top_k: 0, score_threshold: 0 } }, 'retrieval_setting.top_k'],
      [{ ...good, retrieval_setting: { top_k: 1, score_threshold: 2 } }, 'retrieval_setting.score_threshold'],
      [{ ...good, metadata_condition: { logical_operator: 'xor', conditions: [] } }, 'metadata_condition.logical_operator'],
      [{ ...good, metadata_condition: { conditions: [{ name: 'a', comparison_operator: 'like', value: 'x' }] } }, 'metadata_condition.conditions[0].comparison_operator'],
      [{ ...good, metadata_condition: { conditions: [{ name: 1, comparison_operator: 'is', value: 'x' }] } }, 'metadata_condition.conditions[0].name'],
      [{ ...good, metadata_condition: { conditions: [{ name: 'a', comparison_operator: 'is' }] } }, 'metadata_condition.conditions[0].value'],
      [{ ...good, query: 'nul \u0000 byte' }, 'query'],
      [[1, 2], undefined],
    ];
    for (const [body, field] of cases) {
      const res = await retrieve(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error_code).toBe(400);
      if (field) expect(res.body.error_msg, JSON.stringify(body)).toContain(field);
    }
    const broken = await http('POST', `${app.url}/dify/retrieval`, { token: org.apiKey, rawBody: '{"knowledge_id":' });
    expect(broken.status).toBe(400);
    expect(broken.body.error_code).toBe(400);
  });

  it('other /dify paths are 404', async () => {
    expect((await http('GET', `${app.url}/dify/retrieval`, { token: org.apiKey })).status).toBe(404);
    expect((await http('POST', `${app.url}/dify/other`, { token: org.apiKey, body: {} })).status).toBe(404);
  });
});
