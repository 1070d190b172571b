/**
 * Conversational forms (interface.md endpoint 9, the `metadata` event, forms in GraphQL): a full
 * walk through a form, the streamed frames, submissions and their signed webhook delivered by the
 * real queue, refusals, and the model path against the local OpenAI-compatible server.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractValue, matchChoice, parseBoolean, parseDate, parseNumber } from '../src/forms/extract.ts';
import { compileForm } from '../src/forms/form-schema.ts';
import { gql, http as call, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { leaveAfterFirstAnswer, messagesOfVisitor, readSse, summarize } from './support/sse.ts';
import { waitFor } from './support/wait.ts';

let app: TestApp; // the embedded default: no chat model
let modelApp: TestApp; // with the local OpenAI-compatible server
let model: OpenAiTestServer;
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;

/** A webhook receiver: records every delivery, answers the queued statuses first, then 200. */
let receiver: http.Server;
let receiverUrl: string;
const deliveries: { path: string; headers: http.IncomingHttpHeaders; body: string; status: number }[] = [];
const statuses: number[] = [];

const SIGNUP_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', minLength: 2 },
    email: { type: 'string', format: 'email', title: 'Email address' },
    company: { type: 'string', title: 'Company' }, // optional: asked last, though listed third
    age: { type: 'integer', minimum: 18, description: 'How old are you?' },
    newsletter: { type: 'boolean', title: 'Subscribe to the newsletter?' },
    plan: { type: 'string', enum: ['Basic', 'Pro', 'Enterprise'], title: 'Plan' },
    startDate: { type: 'string', format: 'date', title: 'Start date' },
  },
  required: ['name', 'email', 'age', 'newsletter', 'plan', 'startDate'],
};

const FORM_FIELDS = `id name schema intro webhookUrl published createdAt updatedAt`;

async function createForm(on: TestApp, token: string, input: Record<string, unknown>) {
  const res = await gql(on.url, `mutation($input: CreateFormInput!) { createForm(input: $input) { form { ${FORM_FIELDS} } webhookSecret } }`, { input }, { token });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data.createForm as { form: { id: string; published: boolean }; webhookSecret: string };
}

const chat = (formId: string, body: unknown, on = app) => call('POST', `${on.api}/forms/${formId}/chat`, { body });

function verify(secret: string, body: string, header: string | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = statuses.shift() ?? 200;
      deliveries.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
      res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{"ok":true}' : '{"error":"try later"}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  model = await startOpenAiTestServer();
  const env = { ALLOW_PRIVATE_URLS: 'true', JOB_RETRY_DELAY_SECONDS: '1', RATE_LIMIT_VISITOR_PER_MINUTE: '1000' };
  [app, modelApp] = await Promise.all([startTestApp(env), startTestApp({ ...env, OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key' })]);
  org = await newOrganization(app.url, 'Forms');
  other = await newOrganization(app.url, 'Other');
});
afterAll(async () => {
  await Promise.all([app?.close(), modelApp?.close()]);
  await model?.close();
  receiver?.close();
});

describe('a form, question by question (no model)', () => {
  it('walks every field type, re-asks an invalid answer, and ends in a stored completed submission', async () => {
    const { form } = await createForm(app, org.apiKey, { name: 'Sign-up', schema: SIGNUP_SCHEMA, intro: 'Welcome! A few questions to set up your account.', published: true });

    const steps: { say: string; field: string | null; valid: boolean; reply: RegExp }[] = [
      { say: 'Hello', field: 'name', valid: true, reply: /^Welcome! A few questions to set up your account\.\n\nPlease give your name\.$/ },
      { say: 'Ada Lovelace', field: 'email', valid: true, reply: /Please give your email address\./ },
      { say: 'my address is ada@example', field: 'email', valid: false, reply: /Email address must be a valid email address\. Please give your email address\./ },
      { say: 'Sure: ada@example.com', field: 'age', valid: true, reply: /How old are you\?/ },
      { say: '15', field: 'age', valid: false, reply: /Age must be at least 18\. How old are you\?/ },
      { say: 'I am 36 years old', field: 'newsletter', valid: true, reply: /Subscribe to the newsletter\? Answer yes or no\./ },
      { say: 'maybe', field: 'newsletter', valid: false, reply: /needs a yes or a no/ },
      { say: 'Yes', field: 'plan', valid: true, reply: /Choose one of: Basic, Pro, Enterprise\./ },
      { say: 'pro', field: 'startDate', valid: true, reply: /start date.*2026-11-22/i },
      { say: '31/02/2026', field: 'startDate', valid: false, reply: /Start date must be a valid date/ },
      { say: '22/11/2026', field: 'company', valid: true, reply: /You can answer "skip" to leave this out\./ },
      { say: 'skip', field: null, valid: true, reply: /your answers have been recorded/ },
    ];
    let conversationId: string | undefined;
    let visitorId: string | undefined;
    for (const step of steps) {
      const res = await chat(form.id, { query: step.say, ...(conversationId ? { conversationId, visitorId } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['answer', 'conversationId', 'currentField', 'isValid', 'status', 'values', 'visitorId']);
      expect({ say: step.say, field: res.body.currentField, valid: res.body.isValid }).toEqual({ say: step.say, field: step.field, valid: step.valid });
      expect(res.body.answer).toMatch(step.reply);
      conversationId ??= res.body.conversationId;
      visitorId ??= res.body.visitorId;
      expect(res.body.conversationId).toBe(conversationId);
    }
    const last = await chat(form.id, { query: 'anything else?', conversationId });
    expect(last.body).toMatchObject({ status: 'completed', currentField: null, isValid: true });
    expect(last.body.answer).toMatch(/already complete/);
    const values = { name: 'Ada Lovelace', email: 'ada@example.com', age: 36, newsletter: true, plan: 'Pro', startDate: '2026-11-22' };
    expect(last.body.values).toEqual(values);

    const subs = await gql(app.url, `query($id: ID!) { formSubmissions(formId: $id) { nodes { id formId conversationId values skipped status completedAt currentField } pageInfo { hasNextPage } } }`, { id: form.id }, { token: org.apiKey });
    expect(subs.errors).toBeUndefined();
    expect(subs.data.formSubmissions.nodes).toHaveLength(1);
    expect(subs.data.formSubmissions.nodes[0]).toMatchObject({ formId: form.id, conversationId, values, skipped: ['company'], status: 'completed', currentField: null });
    expect(subs.data.formSubmissions.nodes[0].completedAt).toBeTruthy();

    // The conversation is readable like any other, with both sides of every turn.
    const conv = await call('GET', `${app.api}/conversations/${conversationId}?limit=100`);
    expect(conv.status).toBe(200);
    expect(conv.body).toMatchObject({ id: conversationId, agentId: null, formId: form.id, visitorId, nextCursor: null });
    expect(conv.body.messages).toHaveLength(2 * (steps.length + 1));
    expect(conv.body.messages.at(-1)).toMatchObject({ from: 'human', text: 'Hello' });
    expect(conv.body.messages.at(-2)).toMatchObject({ from: 'agent' });
    expect(conv.body.messages.at(-2).text).toMatch(/^Welcome!/);
  });

  it('takes the first field from the opening message, and an optional field answered rather than skipped', async () => {
    const schema = { type: 'object', properties: { email: { type: 'string', format: 'email' }, website: { type: 'string', format: 'uri', title: 'Website' }, rating: { type: 'number', maximum: 5 } }, required: ['email'] };
    const { form } = await createForm(app, org.apiKey, { name: 'Quick', schema, published: true });
    const first = await chat(form.id, { query: 'hi, it is grace@example.org' });
    expect(first.body).toMatchObject({ currentField: 'website', isValid: true, values: { email: 'grace@example.org' } });
    const second = await chat(form.id, { query: 'example.com/about', conversationId: first.body.conversationId });
    expect(second.body).toMatchObject({ currentField: 'rating', values: { website: 'https://example.com/about' } });
    const third = await chat(form.id, { query: '4,5', conversationId: first.body.conversationId });
    expect(third.body).toMatchObject({ status: 'completed', values: { email: 'grace@example.org', website: 'https://example.com/about', rating: 4.5 } });
  });

  it('streams answer frames, one metadata frame, endpoint_response and [DONE] (REST SSE and graphql-sse)', async () => {
    const { form } = await createForm(app, org.apiKey, { name: 'Streamed', schema: SIGNUP_SCHEMA, intro: 'Hi there.', published: true });
    const res = await fetch(`${app.api}/forms/${form.id}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'Grace Hopper', streaming: true }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readSse(res);
    const { answer, response, last, metadata } = summarize(events);
    const kinds = events.map((e) => e.event ?? 'data');
    const firstMeta = kinds.indexOf('metadata');
    expect(kinds.slice(0, firstMeta).every((k) => k === 'answer')).toBe(true);
    expect(kinds.filter((k) => k === 'answer').length).toBeGreaterThan(1);
    expect(kinds.slice(firstMeta + 1, -1).every((k) => k === 'endpoint_response')).toBe(true);
    expect(metadata).toEqual([{ currentField: 'email', isValid: true }]);
    expect(answer).toBe('Hi there.\n\nThank you. Please give your email address.');
    expect(Object.keys(response).sort()).toEqual(['conversationId', 'currentField', 'isValid', 'status', 'values', 'visitorId']);
    expect(response).toMatchObject({ currentField: 'email', isValid: true, values: { name: 'Grace Hopper' }, status: 'in_progress' });
    expect(last).toBe('[DONE]');

    const bad = summarize(await readSse(await fetch(`${app.api}/forms/${form.id}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'not an email', streaming: true, conversationId: response.conversationId }) })));
    expect(bad.metadata).toEqual([{ currentField: 'email', isValid: false }]);
    expect(bad.answer).toMatch(/must be a valid email address/);

    const client = createClient({ url: `${app.url}/graphql/stream` });
    const types: string[] = [];
    let final: any = null;
    for await (const event of client.iterate({
      query: `subscription($formId: ID!, $input: FormChatInput!) { formChatStream(formId: $formId, input: $input) { type text metadata { currentField isValid } response { currentField values status conversationId } } }`,
      variables: { formId: form.id, input: { query: 'grace@example.com', conversationId: response.conversationId } },
    })) {
      const e = (event.data as any).formChatStream;
      types.push(e.type);
      if (e.type === 'metadata') expect(e.metadata).toEqual({ currentField: 'age', isValid: true });
      if (e.type === 'endpoint_response') final = e.response;
    }
    client.dispose();
    expect(types.at(-2)).toBe('metadata');
    expect(types.at(-1)).toBe('endpoint_response');
    expect(final).toMatchObject({ currentField: 'age', values: { name: 'Grace Hopper', email: 'grace@example.com' }, status: 'in_progress' });
  });
});

describe('webhook', () => {
  it('POSTs the completed submission signed with the form secret, and delivers again after a 500', async () => {
    const schema = { type: 'object', properties: { email: { type: 'string', format: 'email' } }, required: ['email'] };
    const created = await createForm(app, org.apiKey, { name: 'Hooked', schema, published: true, webhookUrl: `${receiverUrl}/hooks/form` });
    expect(created.webhookSecret).toMatch(/^whsec_/);
    // The secret is shown at creation and by rotation only.
    const rotated = await gql(app.url, `mutation($id: ID!) { rotateFormWebhookSecret(id: $id) { form { id } webhookSecret } }`, { id: created.form.id }, { token: org.apiKey });
    const secret: string = rotated.data.rotateFormWebhookSecret.webhookSecret;
    expect(secret).not.toBe(created.webhookSecret);

    statuses.push(500);
    const before = deliveries.length;
    const done = await chat(created.form.id, { query: 'linus@example.com' });
    expect(done.body).toMatchObject({ status: 'completed', values: { email: 'linus@example.com' } });

    await waitFor(async () => deliveries.length >= before + 2, 20_000, 'a second delivery');
    const [failed, delivered] = deliveries.slice(before);
    expect(failed!.status).toBe(500);
    expect(delivered!.status).toBe(200);
    for (const d of [failed!, delivered!]) {
      expect(d.path).toBe('/hooks/form');
      expect(d.headers['content-type']).toBe('application/json');
      expect(verify(secret, d.body, d.headers['x-agentbase-signature'] as string)).toBe(true);
      expect(verify(created.webhookSecret, d.body, d.headers['x-agentbase-signature'] as string)).toBe(false);
    }
    const body = JSON.parse(delivered!.body);
    expect(body).toMatchObject({ formId: created.form.id, conversationId: done.body.conversationId, values: { email: 'linus@example.com' } });
    expect(Object.keys(body).sort()).toEqual(['completedAt', 'conversationId', 'formId', 'sentAt', 'submissionId', 'values']);
    expect(Date.parse(body.completedAt)).not.toBeNaN();

    const sub = await waitFor(async () => {
      const res = await gql(app.url, `query($id: ID!) { formSubmissions(formId: $id, status: completed) { nodes { id webhookAttempts webhookDeliveredAt webhookError } } }`, { id: created.form.id }, { token: org.apiKey });
      const node = res.data.formSubmissions.nodes[0];
      return node?.webhookDeliveredAt ? node : undefined;
    }, 10_000, 'the delivery to be recorded');
    expect(sub).toMatchObject({ id: body.submissionId, webhookAttempts: 2, webhookError: null });
    // No further delivery: a delivered submission is not sent again.
    await new Promise((r) => setTimeout(r, 1500));
    expect(deliveries.length).toBe(before + 2);
  });
});

describe('refusals', () => {
  it('an unknown or unpublished form is 404, and so is a conversation of another form', async () => {
    expect((await chat(randomUUID(), { query: 'hi' })).status).toBe(404);
    expect((await chat('nope', { query: 'hi' })).status).toBe(404);
    const hidden = await createForm(app, org.apiKey, { name: 'Draft', schema: SIGNUP_SCHEMA });
    expect(hidden.form.published).toBe(false);
    const res = await chat(hidden.form.id, { query: 'hi' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    const streamed = await fetch(`${app.api}/forms/${hidden.form.id}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'hi', streaming: true }) });
    expect(streamed.status).toBe(404);
    expect(streamed.headers.get('content-type')).toMatch(/application\/json/);

    const published = await gql(app.url, `mutation($id: ID!) { updateForm(id: $id, input: { published: true }) { published } }`, { id: hidden.form.id }, { token: org.apiKey });
    expect(published.data.updateForm.published).toBe(true);
    const started = await chat(hidden.form.id, { query: 'hi' });
    expect(started.status).toBe(200);
    const { form: another } = await createForm(app, org.apiKey, { name: 'Another', schema: SIGNUP_SCHEMA, published: true });
    expect((await chat(another.id, { query: 'hi', conversationId: started.body.conversationId })).status).toBe(404);
    expect((await chat(hidden.form.id, { query: 'hi', conversationId: randomUUID() })).status).toBe(404);
    expect((await chat(hidden.form.id, {})).status).toBe(400);
  });

  it('bad input to a streamed form chat is a 400 JSON error before the stream (REST and graphql-sse); no conversation is made', async () => {
    const { form } = await createForm(app, org.apiKey, { name: 'Strict', schema: SIGNUP_SCHEMA, published: true });
    const count = async () => Number((await app.db.orm.em.getConnection().execute('select count(*)::int as n from conversations where form_id = ?', [form.id]))[0].n);
    for (const [body, field] of [[{ query: '' }, 'query'], [{ query: 'hi', visitorId: 'v'.repeat(201) }, 'visitorId']] as const) {
      const res = await fetch(`${app.api}/forms/${form.id}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, streaming: true }) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const error = ((await res.json()) as any).error;
      expect(error).toMatchObject({ code: 'BAD_USER_INPUT', details: { field } });
      expect((await chat(form.id, body)).body.error).toEqual(error);
    }
    const client = createClient({ url: `${app.url}/graphql/stream` });
    const results: any[] = [];
    for await (const event of client.iterate({ query: `subscription($formId: ID!, $input: FormChatInput!) { formChatStream(formId: $formId, input: $input) { type text } }`, variables: { formId: form.id, input: { query: '' } } })) {
      results.push(event);
    }
    client.dispose();
    expect(results).toHaveLength(1);
    expect(results[0].errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(await count()).toBe(0);
  });

  it('a visitor cannot read a conversation without its id', async () => {
    expect((await call('GET', `${app.api}/conversations/${randomUUID()}`)).status).toBe(404);
  });

  it.each([
    ['not an object', ['a'], /JSONObject|object/],
    ['not of type object', { type: 'array', items: { type: 'string' } }, /"type" must be "object"/],
    ['no properties', { type: 'object', properties: {} }, /"properties" must name at least one field/],
    ['no properties at all', { type: 'object' }, /"properties" must name at least one field/],
    ['required naming a missing property', { type: 'object', properties: { a: { type: 'string' } }, required: ['b'] }, /"required" names "b", which is not in "properties"/],
    ['an invalid keyword value', { type: 'object', properties: { age: { type: 'integer', minimum: 'eighteen' } } }, /does not compile.*minimum must be number/],
    ['an unknown type', { type: 'object', properties: { age: { type: 'int' } } }, /does not compile/],
  ])('a malformed schema is 400: %s', async (_name, schema, message) => {
    const res = await gql(app.url, `mutation($input: CreateFormInput!) { createForm(input: $input) { form { id } } }`, { input: { name: 'Bad', schema } }, { token: org.apiKey });
    expect(res.errors![0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(res.errors![0]!.message).toMatch(message);
    if (!Array.isArray(schema)) expect(res.errors![0]!.extensions.details).toMatchObject({ field: 'schema' });
  });

  it('a webhook URL must be http(s); updates are checked the same way and change nothing when refused', async () => {
    const bad = await gql(app.url, `mutation($input: CreateFormInput!) { createForm(input: $input) { form { id } } }`, { input: { name: 'Bad', schema: SIGNUP_SCHEMA, webhookUrl: 'ftp://example.com/x' } }, { token: org.apiKey });
    expect(bad.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { field: 'webhookUrl' } });
    const { form } = await createForm(app, org.apiKey, { name: 'Good', schema: SIGNUP_SCHEMA });
    const update = await gql(app.url, `mutation($id: ID!, $input: UpdateFormInput!) { updateForm(id: $id, input: $input) { id } }`, { id: form.id, input: { schema: { type: 'object', properties: {} }, name: 'Renamed' } }, { token: org.apiKey });
    expect(update.errors![0]!.extensions.code).toBe('BAD_USER_INPUT');
    const read = await gql(app.url, `query($id: ID!) { form(id: $id) { name schema } }`, { id: form.id }, { token: org.apiKey });
    expect(read.data.form).toEqual({ name: 'Good', schema: SIGNUP_SCHEMA });
  });

  it('forms belong to their organization: others get NOT_FOUND, anonymous callers UNAUTHENTICATED', async () => {
    const { form } = await createForm(app, org.apiKey, { name: 'Ours', schema: SIGNUP_SCHEMA, webhookUrl: 'https://hooks.example.com/x' });
    for (const [query, variables] of [
      [`query($id: ID!) { form(id: $id) { id } }`, { id: form.id }],
      [`query($id: ID!) { formSubmissions(formId: $id) { nodes { id } } }`, { id: form.id }],
      [`mutation($id: ID!) { updateForm(id: $id, input: { name: "Theirs" }) { id } }`, { id: form.id }],
      [`mutation($id: ID!) { rotateFormWebhookSecret(id: $id) { webhookSecret } }`, { id: form.id }],
      [`mutation($id: ID!) { deleteForm(id: $id) { id } }`, { id: form.id }],
    ] as const) {
      expect((await gql(app.url, query, variables, { token: other.apiKey })).errors![0]!.extensions.code).toBe('NOT_FOUND');
      expect((await gql(app.url, query, variables)).errors![0]!.extensions.code).toBe('UNAUTHENTICATED');
    }
    const mine = await gql(app.url, `{ forms(first: 100) { nodes { id name webhookUrl } } }`, {}, { token: org.apiKey });
    expect(mine.data.forms.nodes.map((f: { id: string }) => f.id)).toContain(form.id);
    const theirs = await gql(app.url, `{ forms { nodes { id } } }`, {}, { token: other.apiKey });
    expect(theirs.data.forms.nodes).toEqual([]);
    const deleted = await gql(app.url, `mutation($id: ID!) { deleteForm(id: $id) { id name } }`, { id: form.id }, { token: org.apiKey });
    expect(deleted.data.deleteForm).toEqual({ id: form.id, name: 'Ours' });
    expect((await gql(app.url, `query($id: ID!) { form(id: $id) { id } }`, { id: form.id }, { token: org.apiKey })).errors![0]!.extensions.code).toBe('NOT_FOUND');
  });
});

describe('with a chat model', () => {
  const isExtraction = (body: any) => String(body.messages?.[0]?.content ?? '').startsWith('You extract form values');

  it('extracts two fields from one message, validates them, and phrases the next question', async () => {
    const owner = await newOrganization(modelApp.url, 'Model forms');
    const { form } = await createForm(modelApp, owner.apiKey, { name: 'Sign-up', schema: SIGNUP_SCHEMA, intro: 'Welcome!', published: true });
    model.setChatReply((body) => (isExtraction(body) ? '```json\n{"values": {"name": "Alan Turing", "email": "alan@example.com", "age": 12}, "skip": []}\n```' : 'Nice to meet you, Alan! How old are you?'));
    const first = await chat(form.id, { query: "Hi, I'm Alan Turing and my email is alan@example.com" }, modelApp);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // age 12 is refused by the schema (minimum 18), so it stays open; name and email are kept.
    expect(first.body).toMatchObject({ values: { name: 'Alan Turing', email: 'alan@example.com' }, currentField: 'age', isValid: true, status: 'in_progress' });
    expect(first.body.answer).toBe('Welcome!\n\nNice to meet you, Alan! How old are you?');
    const extraction = model.requests.filter((r) => r.path === '/v1/chat/completions' && isExtraction(r.body)).at(-1)!;
    const prompt = String(extraction.body.messages[1].content);
    expect(prompt).toContain("Hi, I'm Alan Turing and my email is alan@example.com");
    expect(prompt).toContain('"startDate"');
    const phrasing = model.requests.filter((r) => r.path === '/v1/chat/completions' && !isExtraction(r.body)).at(-1)!;
    expect(String(phrasing.body.messages[1].content)).toContain('How old are you?');

    // Unusable JSON: the deterministic reading takes over.
    model.setChatReply((body) => (isExtraction(body) ? 'I think they are forty.' : 'Got it. Newsletter?'));
    const second = await chat(form.id, { query: '40', conversationId: first.body.conversationId }, modelApp);
    expect(second.body).toMatchObject({ currentField: 'newsletter', isValid: true, values: { age: 40 } });

    // A value the schema refuses is explained and asked again.
    model.setChatReply((body) => (isExtraction(body) ? '{"values": {"newsletter": "perhaps"}}' : 'Please answer yes or no.'));
    const third = await chat(form.id, { query: 'perhaps', conversationId: first.body.conversationId }, modelApp);
    expect(third.body).toMatchObject({ currentField: 'newsletter', isValid: false });
    const lastPhrasing = model.requests.filter((r) => r.path === '/v1/chat/completions' && !isExtraction(r.body)).at(-1)!;
    expect(String(lastPhrasing.body.messages[1].content)).toContain('needs a yes or a no');

    // The endpoint failing (each call and its one retry) does not stop the form.
    model.failNext('/v1/chat/completions', 500, 4);
    const fourth = await chat(form.id, { query: 'no', conversationId: first.body.conversationId }, modelApp);
    expect(fourth.status).toBe(200);
    expect(fourth.body).toMatchObject({ currentField: 'plan', isValid: true, values: { newsletter: false } });
    expect(fourth.body.answer).toBe('Thank you. Please give your plan. Choose one of: Basic, Pro, Enterprise.');
  });
});

describe('a reply left early', () => {
  it('keeps the state and the words said (incomplete); the model call stops, the query it spent stays counted', async () => {
    const owner = await newOrganization(modelApp.url, 'Leaving forms');
    const { form } = await createForm(modelApp, owner.apiKey, { name: 'Contact', schema: SIGNUP_SCHEMA, published: true });
    const phrased = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    model.setChatReply((body) => (String(body.messages?.[0]?.content ?? '').startsWith('You extract form values') ? '{"values": {"name": "Ada Lovelace"}, "skip": []}' : phrased));
    model.setStreamTiming({ tokenDelayMs: 20 });
    try {
      await leaveAfterFirstAnswer(`${modelApp.api}/forms/${form.id}/chat`, { query: 'I am Ada Lovelace', visitorId: 'leaves-form' }, model);
      const db = modelApp.db.orm.em.getConnection();
      const messages = () => messagesOfVisitor(db, 'leaves-form');
      await waitFor(async () => (await messages()).length === 2, 10_000, 'the partial reply');
      const [human, partial] = await messages();
      expect(human).toMatchObject({ from: 'human', text: 'I am Ada Lovelace' });
      expect(partial!.metadata).toEqual({ currentField: 'email', isValid: true, status: 'in_progress', incomplete: true });
      expect(partial!.text.length).toBeGreaterThan(0);
      expect(phrased.startsWith(partial!.text)).toBe(true);
      expect(partial!.text.length).toBeLessThan(phrased.length);
      // The answer given is kept: the next message continues from it.
      const [submission] = await db.execute(`select s."values", s.current_field from form_submissions s where s.form_id = ?`, [form.id]);
      expect(submission).toMatchObject({ values: { name: 'Ada Lovelace' }, current_field: 'email' });
      const [usage] = await db.execute('select coalesce(sum(queries), 0)::int as n from organization_usage where organization_id = ?', [owner.organizationId]);
      expect(usage.n).toBe(1);
    } finally {
      model.setStreamTiming({ tokenDelayMs: 0 });
    }
  });

  it('a new conversation is written with its first message and its submission, at turn 1', async () => {
    const { form } = await createForm(app, org.apiKey, { name: 'Lazy', schema: SIGNUP_SCHEMA, published: true });
    const count = async () => Number((await app.db.orm.em.getConnection().execute('select count(*)::int as n from conversations where form_id = ?', [form.id]))[0].n);
    const first = await chat(form.id, { query: 'Hello' });
    expect(first.status).toBe(200);
    expect(await count()).toBe(1);
    const rows = await app.db.orm.em.getConnection().execute(`select c.channel, c.visitor_id, s.turn from conversations c join form_submissions s on s.conversation_id = c.id where c.id = ?`, [first.body.conversationId]);
    expect(rows).toEqual([{ channel: 'form', visitor_id: first.body.visitorId, turn: 1 }]);
    expect((await chat(form.id, { query: 'Ada', conversationId: first.body.conversationId })).body.currentField).toBe('email');
  });
});

describe('the deterministic reading', () => {
  it('normalises dates, numbers, yes/no and choices', () => {
    for (const [text, iso] of [
      ['2026-11-22', '2026-11-22'],
      ['22/11/2026', '2026-11-22'],
      ['11/22/2026', '2026-11-22'],
      ['22.11.2026', '2026-11-22'],
      ['on 22-11-2026 please', '2026-11-22'],
      ['November 22, 2026', '2026-11-22'],
      ['22nd of Nov 2026', '2026-11-22'],
      ['31/02/2026', null],
      ['next tuesday', null],
    ] as const) expect(parseDate(text), text).toBe(iso);
    expect([parseNumber('I am 36'), parseNumber('3,5'), parseNumber('1,250,000'), parseNumber('-2.5 degrees'), parseNumber('none')]).toEqual([36, 3.5, 1250000, -2.5, null]);
    expect(['yes', 'Y', 'yes please', 'Nope', 'false', 'maybe'].map(parseBoolean)).toEqual([true, true, true, false, false, null]);
    const form = compileForm({ type: 'object', properties: { plan: { enum: ['Basic', 'Pro', 'Premium'] } } });
    const plan = form.field('plan')!;
    expect(['basic', 'Ba', 'I want the pro plan', 'P', 'gold'].map((t) => matchChoice(plan, t))).toEqual(['Basic', 'Basic', 'Pro', undefined, undefined]);
    const text = compileForm({ type: 'object', properties: { fullName: { type: 'string' }, company: { type: 'string' }, problem: { type: 'string' } } });
    expect(extractValue(text.field('fullName')!, "Hi, I'm Ada Lovelace.")).toBe('Ada Lovelace');
    expect(extractValue(text.field('fullName')!, 'my full name is Ada King')).toBe('Ada King');
    expect(extractValue(text.field('company')!, 'Hello! My company is Acme Inc.')).toBe('Acme Inc.');
    expect(extractValue(text.field('problem')!, 'It is broken since Monday.')).toBe('It is broken since Monday.');
  });

  it('orders required fields first and explains refusals in words', () => {
    const form = compileForm({ type: 'object', properties: { note: { type: 'string' }, zip: { type: 'string', pattern: '^[0-9]{5}$', title: 'ZIP code' }, qty: { type: 'integer', exclusiveMinimum: 0, multipleOf: 2 } }, required: ['zip', 'qty'] });
    expect(form.fields.map((f) => [f.name, f.required])).toEqual([['zip', true], ['qty', true], ['note', false]]);
    expect(form.check(form.field('zip')!, 'abc', {})).toBe('ZIP code is not in the expected format.');
    expect(form.check(form.field('qty')!, 0, {})).toBe('Qty must be more than 0.');
    expect(form.check(form.field('qty')!, 3, {})).toBe('Qty must be a multiple of 2.');
    expect(form.check(form.field('qty')!, 'ten', {})).toBe('Qty must be a whole number.');
    expect(form.check(form.field('qty')!, 4, {})).toBeNull();
  });
});
