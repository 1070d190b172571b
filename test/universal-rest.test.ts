/**
 * The universal processor over both transports: `POST {api}/agents/{id}/universal`
 * (interface.md endpoint 8) and the GraphQL mutation `universalProcess`, on the real service.
 * Failures answer with the table's status and `{ success: false, error: { code, message, details? } }`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { corruptPng, makeWav, textImage } from './support/media.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { makePdf } from './support/samples.ts';

const UPLOAD_MAX_BYTES = 1024 * 1024;
const SENTENCE = 'Deliveries arrive every Monday morning';

let app: TestApp;
let model: OpenAiTestServer;
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
let publicAgent: string;
let privateAgent: string;
let png: Buffer;

const b64 = (data: Buffer) => data.toString('base64');
const universal = (agent: string, body: unknown, token?: string | null) => http('POST', `${app.api}/agents/${encodeURIComponent(agent)}/universal`, { token, body });

function expectFailure(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
}

beforeAll(async () => {
  model = await startOpenAiTestServer();
  app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key', VISION_MODEL: 'gpt-vision-test', UPLOAD_MAX_BYTES: String(UPLOAD_MAX_BYTES) });
  org = await newOrganization(app.url, 'Universal REST');
  other = await newOrganization(app.url, 'Other');
  const create = async (visibility: string, handle: string) =>
    (await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Reader', visibility, handle } }, { token: org.apiKey })).data.createAgent.id as string;
  publicAgent = await create('public', `reader-${Date.now()}`);
  privateAgent = await create('private', `secret-${Date.now()}`);
  png = await textImage([SENTENCE], 'png');
}, 120_000);

afterAll(async () => {
  await app?.close();
  await model?.close();
});

describe('POST /agents/{id}/universal', () => {
  it('answers {success, messageText, context} for a public agent without credentials', async () => {
    const res = await universal(publicAgent, { fileBuffer: b64(png), fileType: 'png', fileName: 'notice.png', userQuery: '' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['context', 'messageText', 'success']);
    expect(res.body.success).toBe(true);
    expect(res.body.messageText).toContain(SENTENCE);
    expect(res.body.context).toMatchObject({ fileName: 'notice.png', fileType: 'png', kind: 'image', mimeType: 'image/png', size: png.length, metadata: { width: 1000, height: 100, format: 'png' } });
    expect(res.body.context.text).toContain(SENTENCE);
    expect(res.body.context.capabilities.ocr.available).toBe(true);
  });

  it('addresses the agent by @handle too', async () => {
    const handle = (await gql(app.url, `query($id: ID!) { agent(id: $id) { handle } }`, { id: publicAgent })).data.agent.handle;
    const res = await universal(`@${handle}`, { fileBuffer: b64(Buffer.from('By handle.')), fileType: 'txt' });
    expect(res.status).toBe(200);
    expect(res.body.messageText).toContain('By handle.');
  });

  it("answers the request with the vision model when one is configured", async () => {
    model.setChatReply(() => 'It says deliveries come on Mondays.');
    const res = await universal(publicAgent, { fileBuffer: b64(png), fileType: 'PNG', fileName: 'notice.png', userQuery: 'When do deliveries come?' });
    expect(res.status).toBe(200);
    expect(res.body.messageText).toBe('It says deliveries come on Mondays.');
    expect(res.body.context.answeredBy).toEqual({ model: 'gpt-vision-test', kind: 'vision' });
  });

  it('gives audio metadata and says why there is no transcript', async () => {
    const res = await universal(publicAgent, { fileBuffer: b64(makeWav(1.5)), fileType: 'wav' });
    expect(res.status).toBe(200);
    expect(Math.abs(res.body.context.durationSeconds - 1.5)).toBeLessThan(0.1);
    expect(res.body.context.transcript).toBeNull();
    expect(res.body.messageText).toContain('Transcription needs a configured speech model');
  });

  it('a private agent: 401 without credentials, 404 to other organizations, 200 to its own', async () => {
    const body = { fileBuffer: b64(Buffer.from('Private.')), fileType: 'txt' };
    expectFailure(await universal(privateAgent, body), 401, 'UNAUTHENTICATED');
    expectFailure(await universal(privateAgent, body, other.apiKey), 404, 'NOT_FOUND');
    const own = await universal(privateAgent, body, org.apiKey);
    expect(own.status).toBe(200);
    expect(own.body.success).toBe(true);
  });

  it('an invalid token: 401', async () => {
    expectFailure(await universal(publicAgent, { fileBuffer: b64(Buffer.from('x')), fileType: 'txt' }, 'ak_not_a_key'), 401, 'UNAUTHENTICATED');
  });

  it('bad input: 400 with success false', async () => {
    const notBase64 = await universal(publicAgent, { fileBuffer: 'this is not base64!', fileType: 'txt' });
    expectFailure(notBase64, 400, 'BAD_USER_INPUT');
    expect(notBase64.body.error.details.field).toBe('fileBuffer');

    const unknown = await universal(publicAgent, { fileBuffer: b64(png), fileType: 'bmp' });
    expectFailure(unknown, 400, 'BAD_USER_INPUT');
    expect(unknown.body.error.message).toContain('images jpg, jpeg, png, webp, gif, tiff; audio mp3, wav, m4a, ogg, webm; video mp4, avi, mov, wmv; documents pdf, doc, docx, txt');

    const mismatch = await universal(publicAgent, { fileBuffer: b64(png), fileType: 'pdf' });
    expectFailure(mismatch, 400, 'BAD_USER_INPUT');
    expect(mismatch.body.error.details.reason).toBe('MAGIC_MISMATCH');

    const corrupt = await universal(publicAgent, { fileBuffer: b64(corruptPng()), fileType: 'png' });
    expectFailure(corrupt, 400, 'BAD_USER_INPUT');
    expect(corrupt.body.error.message).toContain('The image could not be read');

    const corruptPdf = await universal(publicAgent, { fileBuffer: b64(Buffer.from('%PDF-1.7 broken')), fileType: 'pdf' });
    expectFailure(corruptPdf, 400, 'BAD_USER_INPUT');

    expectFailure(await universal(publicAgent, { fileType: 'txt' }), 400, 'BAD_USER_INPUT');
    expectFailure(await universal(publicAgent, { fileBuffer: 42, fileType: 'txt' }), 400, 'BAD_USER_INPUT');
  });

  it('above UPLOAD_MAX_BYTES: 413 with success false', async () => {
    // Just above the cap: the body passes the transport, the service refuses it.
    const justAbove = await universal(publicAgent, { fileBuffer: b64(Buffer.alloc(UPLOAD_MAX_BYTES + 1, 0x61)), fileType: 'txt' });
    expectFailure(justAbove, 413, 'PAYLOAD_TOO_LARGE');
    // Far above: refused while the body is read.
    const farAbove = await universal(publicAgent, { fileBuffer: b64(Buffer.alloc(3 * UPLOAD_MAX_BYTES, 0x61)), fileType: 'txt' });
    expectFailure(farAbove, 413, 'PAYLOAD_TOO_LARGE');
    // At the cap it is read.
    const atCap = await universal(publicAgent, { fileBuffer: b64(Buffer.alloc(UPLOAD_MAX_BYTES, 0x61)), fileType: 'txt' });
    expect(atCap.status, JSON.stringify(atCap.body).slice(0, 300)).toBe(200);
  });
});

describe('GraphQL universalProcess', () => {
  const MUTATION = `mutation($agentId: ID!, $input: UniversalInput!) { universalProcess(agentId: $agentId, input: $input) { success messageText context } }`;

  it('answers the same result', async () => {
    const pdf = makePdf([['Opening hours are nine to five.']]);
    const res = await gql(app.url, MUTATION, { agentId: publicAgent, input: { fileBuffer: b64(pdf), fileType: 'pdf', fileName: 'hours.pdf' } });
    expect(res.errors).toBeUndefined();
    expect(res.data.universalProcess.success).toBe(true);
    expect(res.data.universalProcess.messageText).toContain('Opening hours are nine to five.');
    expect(res.data.universalProcess.context).toMatchObject({ kind: 'document', pageCount: 1, fileName: 'hours.pdf' });
  });

  it('puts the error code in extensions', async () => {
    const res = await gql(app.url, MUTATION, { agentId: publicAgent, input: { fileBuffer: '***', fileType: 'txt' } });
    expect(res.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.extensions.details).toMatchObject({ field: 'fileBuffer' });
  });
});
