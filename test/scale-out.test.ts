/**
 * Several processes on one database and one storage folder, as an operator scales out: two API
 * processes (ROLE=api) and two workers (ROLE=worker) on PostgreSQL. What one process does, the
 * others see: status events, changed settings (caches), spent budgets; losing one API process
 * leaves the other serving. On the embedded database one process owns the data, and a second
 * one is refused. Real processes (spawnMain); only the model endpoint is a local stand-in.
 */
import { createClient } from 'graphql-sse';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, http, newOrganization } from './support/client.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { freePort, killAll, spawnMain } from './support/process.ts';
import { endpointEnv, sharedData, startProcess, type Started } from './support/service.ts';
import { waitFor } from './support/wait.ts';

const ON_POSTGRES = !!process.env.TEST_DATABASE_URL;

let model: OpenAiTestServer;
const cleanups: (() => Promise<void>)[] = [];
beforeAll(async () => {
  model = await startOpenAiTestServer();
});
afterAll(async () => {
  killAll();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await model?.close();
});

const modelEnv = () => endpointEnv(model.url);

const systemPromptOfLastChat = () => model.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)?.body.messages[0].content as string;

if (ON_POSTGRES) {
  describe('two API processes and two workers on one PostgreSQL', () => {
    let api1: Started;
    let api2: Started;
    let databaseUrl: string;
    let org: Awaited<ReturnType<typeof newOrganization>>;
    let store: string;

    beforeAll(async () => {
      const shared = await sharedData();
      cleanups.push(shared.drop);
      databaseUrl = shared.databaseUrl!;
      const env = { ...shared.env, ...modelEnv(), RATE_LIMIT_VISITOR_PER_MINUTE: '3' };
      // The first one migrates the new database; the others start together on the migrated one.
      api1 = await startProcess({ ...env, ROLE: 'api' });
      [api2] = await Promise.all([startProcess({ ...env, ROLE: 'api' }), startProcess({ ...env, ROLE: 'worker' }), startProcess({ ...env, ROLE: 'worker' })]);
      org = await newOrganization(api1.url, 'Scaled');
      store = (await gql(api1.url, `mutation { createDatastore(input: { name: "Shared" }) { id } }`, {}, { token: org.apiKey })).data.createDatastore.id;
    }, 180_000);

    it('a file uploaded through API 1 is processed by a worker, and its status changes reach a subscription on API 2', async () => {
      const client = createClient({ url: `${api2.url}/graphql/stream`, headers: { authorization: `Bearer ${org.apiKey}` }, retryAttempts: 0 });
      const changes: { id: string; status: string }[] = [];
      let target: string | null = null;
      const reading = (async () => {
        for await (const event of client.iterate({ query: `subscription($d: ID!) { datasourceStatusChanged(datastoreId: $d) { id status } }`, variables: { d: store } })) {
          const change = (event.data as any).datasourceStatusChanged;
          changes.push(change);
          if (change.id === target && change.status === 'synched') break;
        }
      })();
      // Until an event arrives the subscription is not known to listen: a first document warms it up.
      const warmUp = await gql(api1.url, `mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id } }`, { i: { datastoreId: store, type: 'text', name: 'Warm-up', text: 'First.' } }, { token: org.apiKey });
      await waitFor(async () => changes.some((c) => c.id === warmUp.data.createDatasource.id), 30_000, 'the subscription on API 2 to deliver');

      const form = new FormData();
      form.append('file', new Blob(['Returns are accepted within thirty days of delivery.\n'], { type: 'text/plain' }), 'returns.txt');
      const uploaded = await fetch(`${api1.api}/external/datastores/file-upload/${store}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${org.apiKey}` } });
      expect(uploaded.status).toBe(200);
      target = ((await uploaded.json()) as { id: string }).id;
      await Promise.race([reading, new Promise((_, reject) => setTimeout(() => reject(new Error(`changes so far: ${JSON.stringify(changes)}`)), 30_000))]);
      client.dispose();
      expect(changes.filter((c) => c.id === target).map((c) => c.status)).toEqual(['unsynched', 'running', 'synched']);

      // Searchable through either API process.
      const found = await http('POST', `${api2.api}/datastores/${store}/query`, { token: org.apiKey, body: { query: 'how long to return' } });
      expect(found.status).toBe(200);
      expect(JSON.stringify(found.body)).toContain('thirty days');
    }, 60_000);

    it('an agent changed through API 2 is answered with its new settings by API 1 at once (not after its cache expires)', async () => {
      const agent = (await gql(api1.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Before', visibility: 'private', systemPrompt: 'You are Before.' } }, { token: org.apiKey })).data.createAgent.id;
      // API 1 reads it (and keeps it in its cache)...
      expect((await http('GET', `${api1.api}/agents/${agent}`, { token: org.apiKey })).body.name).toBe('Before');
      expect((await http('POST', `${api1.api}/agents/${agent}/query`, { token: org.apiKey, body: { query: 'Who are you?' } })).status).toBe(200);
      expect(systemPromptOfLastChat()).toContain('You are Before.');

      // ...API 2 changes it...
      const changed = await gql(api2.url, `mutation($id: ID!) { updateAgent(id: $id, input: { name: "After", description: "Changed on API 2.", systemPrompt: "You are After." }) { name } }`, { id: agent }, { token: org.apiKey });
      expect(changed.data?.updateAgent, JSON.stringify(changed.errors)).toEqual({ name: 'After' });

      // ...and API 1 answers with the new settings as soon as the change's notification reaches it:
      // milliseconds (the NOTIFY is delivered asynchronously, so a loaded machine may take a few),
      // not the 60 s its cache would otherwise keep the old agent.
      const changedAt = Date.now();
      await waitFor(async () => (await http('GET', `${api1.api}/agents/${agent}`, { token: org.apiKey })).body.name === 'After', 5_000, 'API 1 to read the new name');
      expect(Date.now() - changedAt).toBeLessThan(5_000);
      expect((await http('POST', `${api1.api}/agents/${agent}/query`, { token: org.apiKey, body: { query: 'Who are you now?' } })).status).toBe(200);
      expect(systemPromptOfLastChat()).toContain('You are After.');
    }, 30_000);

    it("limits hold across both: an organization's monthly queries and a visitor's rate are one budget", async () => {
      const agent = (await gql(api1.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Budget', visibility: 'public' } }, { token: org.apiKey })).data.createAgent.id;

      // A visitor may ask 3 times a minute, wherever the question lands.
      const asVisitor = (api: Started) => http('POST', `${api.api}/agents/${agent}/query`, { body: { query: 'Hello?', visitorId: 'visitor-across' } });
      expect((await asVisitor(api1)).status).toBe(200);
      expect((await asVisitor(api2)).status).toBe(200);
      expect((await asVisitor(api1)).status).toBe(200);
      const limited = await asVisitor(api2);
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe('RATE_LIMITED');

      // Three queries a month in all: spent through both processes, the fourth is refused in either.
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      cleanups.push(() => db.end());
      const other = await newOrganization(api2.url, 'Budgeted');
      await db.query('update organizations set monthly_query_limit = 3 where id = $1', [other.organizationId]);
      const theirs = (await gql(api2.url, `mutation { createAgent(input: { name: "Counted", visibility: private }) { id } }`, {}, { token: other.apiKey })).data.createAgent.id;
      const ask = (api: Started) => http('POST', `${api.api}/agents/${theirs}/query`, { token: other.apiKey, body: { query: 'Counted?' } });
      expect((await ask(api1)).status).toBe(200);
      expect((await ask(api2)).status).toBe(200);
      expect((await ask(api1)).status).toBe(200);
      const refused = await ask(api2);
      expect(refused.status).toBe(402);
      expect(refused.body.error.code).toBe('PAYMENT_REQUIRED');
      expect((await ask(api1)).status).toBe(402);
      const answered = await db.query('select count(*)::int as n from messages m join conversations c on c.id = m.conversation_id where c.agent_id = $1 and m."from" = $2', [theirs, 'agent']);
      expect(answered.rows).toEqual([{ n: 3 }]);
    }, 30_000);

    it('killing one API process (SIGKILL) leaves the other serving', async () => {
      api1.proc.child.kill('SIGKILL');
      expect(await api1.proc.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const me = await gql(api2.url, `{ me { organization { id } } }`, {}, { token: org.apiKey });
      expect(me.data.me.organization.id).toBe(org.organizationId);
      const found = await http('POST', `${api2.api}/datastores/${store}/query`, { token: org.apiKey, body: { query: 'returns' } });
      expect(found.status).toBe(200);
      // And the workers keep processing what API 2 is given.
      const created = await gql(api2.url, `mutation($i: CreateDatasourceInput!) { createDatasource(input: $i) { id } }`, { i: { datastoreId: store, type: 'text', name: 'After the loss', text: 'Still processed.' } }, { token: org.apiKey });
      const id = created.data.createDatasource.id;
      await waitFor(async () => (await gql(api2.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id }, { token: org.apiKey })).data.datasource.status === 'synched', 30_000, 'the datasource to be processed');
    }, 60_000);
  });
} else {
  describe('the embedded database belongs to one process', () => {
    it('a second process on the same data folder is refused with a clear message, and the first keeps serving', async () => {
      const shared = await sharedData();
      cleanups.push(shared.drop);
      const env = { ...shared.env, ...modelEnv() };
      const first = await startProcess(env);
      const org = await newOrganization(first.url, 'Alone');

      // A worker (`npm run worker`) and a second API process, pointed at the same folder.
      for (const role of ['worker', 'api']) {
        const second = spawnMain({ ...env, ROLE: role, PORT: String(await freePort()) });
        expect(await second.exited).toEqual({ code: 1, signal: null });
        const said = second.logs().map((l) => l.line ?? l.msg).join('\n');
        expect(said).toContain(`is in use by process ${first.proc.child.pid}`);
        expect(said).toMatch(/set DATABASE_URL to a PostgreSQL server/);
      }

      const me = await gql(first.url, `{ me { organization { id } } }`, {}, { token: org.apiKey });
      expect(me.data.me.organization.id).toBe(org.organizationId);
    }, 120_000);
  });
}
