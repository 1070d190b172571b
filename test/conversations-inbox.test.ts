/**
 * The conversations inbox over GraphQL: an organization's conversations newest first, with their
 * message count and last activity, filtered by agent, visitor and date, page by page; a key
 * limited to some agents sees only theirs, another organization sees none, anonymous callers are
 * asked to sign in, and bad filters or cursors are refused naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, newOrganization } from './support/client.ts';
import { rawQuery } from '../src/db/raw.ts';

let app: TestApp;
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
const agents: { a: string; b: string } = { a: '', b: '' };
/** Conversation ids in creation order. */
const made: { id: string; agent: 'a' | 'b'; visitor: string }[] = [];
let between: string;

const LIST = `query($filter: ConversationFilter, $first: Int!, $after: String) {
  conversations(filter: $filter, first: $first, after: $after) {
    nodes { id agentId visitorId channel createdAt updatedAt messageCount }
    pageInfo { endCursor hasNextPage }
  }
}`;

async function list(variables: Record<string, unknown>, token: string | null = org.session) {
  return gql(app.url, LIST, { first: 20, ...variables }, { token });
}

async function ask(agent: 'a' | 'b', visitor: string, conversationId?: string): Promise<string> {
  const res = await gql(app.url, `mutation($id: ID!, $input: AgentQueryInput!) { agentQuery(id: $id, input: $input) { conversationId } }`, {
    id: agents[agent],
    input: { query: `hello from ${visitor}`, visitorId: visitor, ...(conversationId ? { conversationId } : {}) },
  }, { token: org.apiKey });
  if (!res.data) throw new Error(JSON.stringify(res.errors));
  return res.data.agentQuery.conversationId;
}

beforeAll(async () => {
  app = await startTestApp();
  [org, other] = await Promise.all([newOrganization(app.url, 'Inbox'), newOrganization(app.url, 'Other')]);
  for (const name of ['a', 'b'] as const) {
    const res = await gql(app.url, `mutation($input: CreateAgentInput!) { createAgent(input: $input) { id } }`, { input: { name: `Agent ${name}` } }, { token: org.session });
    agents[name] = res.data.createAgent.id;
  }
  const first = await ask('a', 'ann');
  made.push({ id: first, agent: 'a', visitor: 'ann' });
  await ask('a', 'ann', first); // continued: four messages
  made.push({ id: await ask('b', 'bob'), agent: 'b', visitor: 'bob' });
  await new Promise((r) => setTimeout(r, 30));
  between = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 30));
  made.push({ id: await ask('a', 'cid'), agent: 'a', visitor: 'cid' });
  made.push({ id: await ask('b', 'ann'), agent: 'b', visitor: 'ann' });
});

afterAll(async () => app?.close());

describe('conversations', () => {
  it('lists the organization\'s conversations newest first, with agent, visitor, channel, count and last activity', async () => {
    const res = await list({});
    expect(res.errors).toBeUndefined();
    const nodes = res.data.conversations.nodes;
    expect(nodes.map((n: { id: string }) => n.id)).toEqual(made.map((m) => m.id).reverse());
    const first = nodes.find((n: { id: string }) => n.id === made[0]!.id);
    expect(first).toMatchObject({ agentId: agents.a, visitorId: 'ann', channel: 'api', messageCount: 4 });
    expect(Date.parse(first.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first.createdAt));
    expect(nodes.find((n: { id: string }) => n.id === made[1]!.id).messageCount).toBe(2);
  });

  it('filters by agent, visitor and date, all together', async () => {
    const ids = async (filter: Record<string, unknown>) => ((await list({ filter })).data.conversations.nodes as { id: string }[]).map((n) => n.id);
    const expected = (keep: (m: (typeof made)[number], i: number) => boolean) => made.filter(keep).map((m) => m.id).reverse();
    expect(await ids({ agentId: agents.a })).toEqual(expected((m) => m.agent === 'a'));
    expect(await ids({ visitorId: 'ann' })).toEqual(expected((m) => m.visitor === 'ann'));
    expect(await ids({ from: between })).toEqual(expected((_, i) => i >= 2));
    expect(await ids({ to: between })).toEqual(expected((_, i) => i < 2));
    expect(await ids({ agentId: agents.b, visitorId: 'ann', from: between })).toEqual([made[3]!.id]);
    expect(await ids({ visitorId: 'nobody' })).toEqual([]);
  });

  it('pages with the cursor without skipping or repeating', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; ; pages++) {
      const res = await list({ first: 1, after });
      const page: { nodes: { id: string }[]; pageInfo: { endCursor: string; hasNextPage: boolean } } = res.data.conversations;
      seen.push(...page.nodes.map((n) => n.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
      expect(pages).toBeLessThan(10);
    }
    expect(seen).toEqual(made.map((m) => m.id).reverse());
  });

  it('gives a key limited to one agent only that agent\'s conversations', async () => {
    const key = await gql(app.url, `mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }`, { i: { name: 'b only', agentIds: [agents.b] } }, { token: org.session });
    const token = key.data.createApiKey.key;
    expect(((await list({}, token)).data.conversations.nodes as { agentId: string }[]).map((n) => n.agentId)).toEqual([agents.b, agents.b]);
    expect((await list({ filter: { agentId: agents.a } }, token)).data.conversations.nodes).toEqual([]);
  });

  it('shows another organization none, and asks anonymous callers to sign in', async () => {
    expect((await list({}, other.session)).data.conversations.nodes).toEqual([]);
    expect((await list({ filter: { agentId: agents.a } }, other.apiKey)).data.conversations.nodes).toEqual([]);
    const anonymous = await list({}, null);
    expect(anonymous.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });

  it('refuses bad input with BAD_USER_INPUT naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ first: 0 }, 'first'],
      [{ first: 101 }, 'first'],
      [{ after: 'not-a-cursor' }, 'after'],
      [{ after: Buffer.from(`2026-01-01T00:00:00.000Z|${made[0]!.id}|x`).toString('base64url') }, 'after'],
      [{ filter: { agentId: 'nope' } }, 'filter.agentId'],
      [{ filter: { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' } }, 'filter.from'],
    ];
    for (const [variables, field] of cases) {
      const res = await list(variables);
      expect(res.errors?.[0]?.extensions.code, JSON.stringify(variables)).toBe('BAD_USER_INPUT');
      if (field !== 'first') expect(res.errors?.[0]?.extensions.details?.field, JSON.stringify(variables)).toBe(field);
    }
    const badDate = await list({ filter: { from: 'yesterday' } });
    expect(badDate.status).toBe(400);
  });

  it('reads a page from the organization\'s index, newest first, without sorting every conversation', async () => {
    // The inbox's statement shape (organization, cursor bound, newest first, a page), planned as a
    // large table would be: a backward scan of (organization_id, created_at, id), no Sort.
    const em = app.db.orm.em.fork();
    await rawQuery(em, 'begin');
    try {
      await rawQuery(em, 'set local enable_seqscan = off');
      await rawQuery(em, 'set local enable_bitmapscan = off');
      const plan = await rawQuery<Record<string, string>>(
        em,
        `explain select * from conversations where organization_id = $1 and (created_at < $2 or (created_at = $2 and id < $3))
         order by created_at desc, id desc limit 21`,
        [org.organizationId, new Date().toISOString(), made[0]!.id],
      );
      const text = plan.map((row) => Object.values(row)[0]).join('\n');
      expect(text).toContain('conversations_organization_id_created_at_id_index');
      expect(text).not.toMatch(/\bSort\b/);
    } finally {
      await rawQuery(em, 'rollback');
    }
  });
});
