/**
 * The universal processor (interface.md endpoint 8), called as a service on the real database
 * and the real agent read rule, with files the tests make: text rendered into images, a WAV
 * written by hand, an MP4 made by ffmpeg, PDF/DOCX/DOC built in code. The local
 * OpenAI-compatible server is the only stand-in (vision, transcription and chat).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { ANONYMOUS, type Auth } from '../src/auth/auth.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { AppError, statusOf } from '../src/errors.ts';
import { createChatModel } from '../src/providers/chat.ts';
import { capabilitySummary, probeEnvironment } from '../src/universal/capabilities.ts';
import { CONTEXT_TEXT_CHARS, MESSAGE_TEXT_CHARS, UniversalService, type UniversalInput, type UniversalOptions } from '../src/universal/universal.service.ts';
import { gql, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { bigPoster, corruptPng, hasFfmpeg, makeAudio, makeVideo, makeWav, pngBomb, textImage } from './support/media.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { makeDoc, makeDocx, makePdf } from './support/samples.ts';

let app: TestApp;
let model: OpenAiTestServer;
let org: Awaited<ReturnType<typeof newOrganization>>;
let other: Awaited<ReturnType<typeof newOrganization>>;
let publicAgent: string;
let privateAgent: string;
let member: Auth;
let outsider: Auth;
let modelConfig: Config;

/** A service like the app's, on the test's database and agents. */
function service(opts: { models?: boolean; env?: Record<string, string> } & UniversalOptions = {}): UniversalService {
  const { models, env, ...options } = opts;
  const config = models
    ? modelConfig
    : loadConfig({ NODE_ENV: 'test', DATA_DIR: app.config.dataDir, DATABASE_URL: 'pglite://memory', ...env });
  return new UniversalService(config, createChatModel(config), app.services.agents, app.services.limits, options);
}

const b64 = (data: Buffer) => data.toString('base64');
const em = () => app.db.orm.em.fork();

/** The AppError a call throws (fails the test when it does not throw one). */
async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a refusal');
}

const SENTENCE = 'The quick brown fox jumps over the lazy dog';
let plain: UniversalService;
let withModels: UniversalService;
let withoutFfmpeg: UniversalService;

beforeAll(async () => {
  model = await startOpenAiTestServer();
  app = await startTestApp();
  org = await newOrganization(app.url, 'Universal');
  other = await newOrganization(app.url, 'Other');
  const create = async (visibility: string) =>
    (await gql(app.url, `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Reader', visibility } }, { token: org.apiKey })).data.createAgent.id as string;
  publicAgent = await create('public');
  privateAgent = await create('private');
  member = { kind: 'apiKey', organizationId: org.organizationId, apiKeyId: 'test' };
  outsider = { kind: 'apiKey', organizationId: other.organizationId, apiKeyId: 'test' };
  modelConfig = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: app.config.dataDir,
    DATABASE_URL: 'pglite://memory',
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'test-key',
    VISION_MODEL: 'gpt-vision-test',
    TRANSCRIPTION_MODEL: 'whisper-1',
    MODEL_3_5_TURBO: 'gpt-chat-test',
  });
  plain = service();
  withModels = service({ models: true });
  withoutFfmpeg = service({ tools: { ffmpeg: null, ffprobe: null } });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await model?.close();
});

describe('images: OCR and metadata, no model', () => {
  it.each(['png', 'jpeg'] as const)('reads the sentence rendered into a %s', async (format) => {
    const image = await textImage([SENTENCE], format);
    const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(image), fileType: format === 'jpeg' ? '.JPG' : 'png', fileName: `note.${format}`, userQuery: '' });
    expect(result.success).toBe(true);
    const ctx = result.context as any;
    expect(ctx.text).toContain(SENTENCE);
    expect(ctx).toMatchObject({
      fileName: `note.${format}`,
      fileType: format === 'jpeg' ? 'jpg' : 'png',
      kind: 'image',
      mimeType: `image/${format}`,
      size: image.length,
      metadata: { width: 1000, height: 100, format },
      textTruncated: false,
      answeredBy: null,
    });
    expect(ctx.capabilities.ocr.available).toBe(true);
    expect(result.messageText).toMatch(new RegExp(`^${format === 'png' ? 'PNG' : 'JPEG'} image, 1000 × 100 pixels\\.\\n\\nText found in the image by OCR:\\n`));
    expect(result.messageText).toContain(SENTENCE);
  });

  it('reads WebP, GIF and TIFF too', { timeout: 60_000 }, async () => {
    for (const format of ['webp', 'gif', 'tiff'] as const) {
      const image = await textImage(['Meeting moved to room 42'], format);
      const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(image), fileType: format, fileName: `x.${format}` });
      expect((result.context as any).metadata, format).toMatchObject({ width: 1000, height: 100, format: format === 'tiff' ? 'tiff' : format });
      expect(result.messageText, format).toContain('Meeting moved to room 42');
    }
  });

  it('says so when an image has no text, and that no model answered the request', async () => {
    const blank = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#ffffff' } }).png().toBuffer();
    const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(blank), fileType: 'png', fileName: 'blank.png', userQuery: 'What does it say?' });
    expect(result.success).toBe(true);
    expect(result.messageText).toContain('No text was found in the image by OCR.');
    expect(result.messageText).toContain('No model is configured to answer the request');
    expect((result.context as any).text).toBe('');
  });
});

describe('audio: metadata, and never an invented transcript', () => {
  it('gives duration, codec, sample rate and channels of a WAV, and says transcription needs a speech model', async () => {
    const wav = makeWav(1.5, { sampleRate: 16_000, channels: 1 });
    const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(wav), fileType: 'wav', fileName: 'tone.wav', userQuery: 'Transcribe this' });
    expect(result.success).toBe(true);
    const ctx = result.context as any;
    expect(Math.abs(ctx.durationSeconds - 1.5)).toBeLessThan(0.1);
    expect(ctx.metadata).toMatchObject({ codec: 'PCM', sampleRate: 16_000, channels: 1, bitsPerSample: 16 });
    expect(ctx.transcript).toBeNull();
    expect(ctx.text).toBe('');
    expect(ctx.capabilities.transcription.available).toBe(false);
    expect(result.messageText).toMatch(/^WAV audio: 1\.5 s, PCM, 16000 Hz, mono\./);
    expect(result.messageText).toContain('Transcription needs a configured speech model');
  });

  it('reads a stereo 44.1 kHz WAV of 3.25 s', async () => {
    const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(makeWav(3.25, { sampleRate: 44_100, channels: 2 })), fileType: 'wav' });
    const ctx = result.context as any;
    expect(Math.abs(ctx.durationSeconds - 3.25)).toBeLessThan(0.1);
    expect(ctx.metadata).toMatchObject({ sampleRate: 44_100, channels: 2 });
    expect(ctx.fileName).toBe('file.wav');
  });

  it('reads MP3, Ogg, M4A and WebM made by ffmpeg', async () => {
    const expected = { mp3: 'mp3', ogg: 'vorbis', m4a: 'aac', webm: 'opus' } as const;
    for (const format of ['mp3', 'ogg', 'm4a', 'webm'] as const) {
      const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(makeAudio(format, 2.5)), fileType: format });
      const ctx = result.context as any;
      expect(Math.abs(ctx.durationSeconds - 2.5), `${format}: ${ctx.durationSeconds}`).toBeLessThan(0.1);
      expect(ctx.metadata.sampleRate, format).toBeGreaterThan(0);
      expect(ctx.metadata.channels, format).toBe(1);
      expect(ctx.metadata.codecId, format).toBe(expected[format]); // ffprobe's id
      expect(typeof ctx.metadata.codec, format).toBe('string');
    }
  }, 60_000);
});

describe('video', () => {
  it('ffmpeg is installed on this machine (CI installs it: apt-get install ffmpeg)', () => {
    expect(hasFfmpeg()).toBe(true);
  });

  it('gives duration, resolution and codecs of an MP4, and the text on its keyframes', async () => {
    const video = await makeVideo(['Welcome to the quarterly review'], 2);
    const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(video), fileType: 'mp4', fileName: 'review.mp4' });
    expect(result.success).toBe(true);
    const ctx = result.context as any;
    expect(Math.abs(ctx.durationSeconds - 2)).toBeLessThan(0.1);
    expect(ctx.metadata).toMatchObject({ width: 960, height: 240, videoCodec: 'h264', audioCodec: 'aac', frameRate: 25, hasAudio: true });
    expect(ctx.keyframes[0].text).toContain('Welcome to the quarterly review');
    expect(ctx.capabilities.ffmpeg.available).toBe(true);
    expect(ctx.transcript).toBeNull();
    expect(result.messageText).toMatch(/^MP4 video: 2 s, 960 × 240, h264 video, aac audio\./);
    expect(result.messageText).toContain('\n\nText found on keyframes by OCR:\n[0 s] Welcome to the quarterly review');
    expect(result.messageText).toContain('The audio track was not transcribed: transcription needs a configured speech model');
  });

  it('reads AVI and WMV', async () => {
    const expected = { avi: ['mpeg4', 'mp3'], wmv: ['wmv2', 'wmav2'] } as const;
    for (const format of ['avi', 'wmv'] as const) {
      const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(await makeVideo(['Training video'], 2, { format })), fileType: format });
      const ctx = result.context as any;
      expect(Math.abs(ctx.durationSeconds - 2), `${format}: ${ctx.durationSeconds}`).toBeLessThan(0.1);
      expect(ctx.metadata, format).toMatchObject({ width: 960, height: 240, videoCodec: expected[format][0], audioCodec: expected[format][1] });
      expect(ctx.keyframes[0]?.text, format).toContain('Training video');
    }
  }, 60_000);

  it('reads a MOV without an audio track', async () => {
    const video = await makeVideo(['Second clip'], 1.2, { audio: false, format: 'mov' });
    const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(video), fileType: 'mov' });
    const ctx = result.context as any;
    expect(Math.abs(ctx.durationSeconds - 1.2)).toBeLessThan(0.1);
    expect(ctx.metadata.hasAudio).toBe(false);
    expect(ctx.notes).toContain('The video has no audio track.');
  });

  it('without ffmpeg and ffprobe, says which capability is missing and why, and still gives the duration', async () => {
    const video = await makeVideo(['Hidden words'], 2);
    const result = await withoutFfmpeg.process(em(), member, publicAgent, { fileBuffer: b64(video), fileType: 'mp4' });
    expect(result.success).toBe(true);
    const ctx = result.context as any;
    expect(ctx.capabilities.ffmpeg).toMatchObject({ available: false });
    expect(ctx.capabilities.ffprobe.detail).toContain('ffprobe is disabled');
    expect(Math.abs(ctx.durationSeconds - 2)).toBeLessThan(0.1);
    expect(result.messageText).toContain('ffmpeg is not installed on this server: no text was read from keyframes');
    expect(result.messageText).not.toContain('Hidden words');
  });
});

describe('documents', () => {
  it('reads a PDF through the ingestion loaders, with its page count', async () => {
    const pdf = makePdf([['Refunds are accepted within thirty days.'], ['Shipping takes two business days.']]);
    const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(pdf), fileType: 'pdf', fileName: 'policy.pdf' });
    const ctx = result.context as any;
    expect(ctx).toMatchObject({ kind: 'document', mimeType: 'application/pdf', pageCount: 2 });
    expect(ctx.text).toContain('Refunds are accepted within thirty days.');
    expect(ctx.text).toContain('Shipping takes two business days.');
    expect(result.messageText).toMatch(/^PDF document: 2 pages, \d+ characters of text\.\n\nText of the document:\nRefunds are accepted/);
  });

  it('reads DOCX, DOC and TXT', { timeout: 60_000 }, async () => {
    const cases: [string, Buffer, string][] = [
      ['docx', await makeDocx(['The board meets on Tuesdays.']), 'The board meets on Tuesdays.'],
      ['doc', makeDoc(['Legacy memo about parking spaces.']), 'Legacy memo about parking spaces.'],
      ['txt', Buffer.from('Plain notes: café opens at 8.\n'), 'Plain notes: café opens at 8.'],
    ];
    for (const [type, data, text] of cases) {
      const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(data), fileType: type });
      expect(result.success, type).toBe(true);
      expect((result.context as any).text, type).toContain(text);
      expect(result.messageText, type).toContain(text);
    }
  });

  it('caps the text: 4,000 characters in messageText, 20,000 in context.text', async () => {
    const long = Array.from({ length: 3000 }, (_, i) => `Line ${i} of a long document.`).join('\n');
    const result = await plain.process(em(), member, publicAgent, { fileBuffer: b64(Buffer.from(long)), fileType: 'txt' });
    const ctx = result.context as any;
    expect(ctx.text.length).toBe(CONTEXT_TEXT_CHARS);
    expect(ctx).toMatchObject({ textTruncated: true, textLength: long.length });
    expect(result.messageText).toContain(long.slice(0, MESSAGE_TEXT_CHARS));
    expect(result.messageText).not.toContain(long.slice(0, MESSAGE_TEXT_CHARS + 1));
    expect(result.messageText).toContain(`(The first 4,000 of ${long.length.toLocaleString('en-US')} characters; context.text holds up to 20,000.)`);
  });
});

describe('with models: vision, transcription, chat', () => {
  it('asks the vision model about the image, sending the image as a data URL', async () => {
    model.setChatReply(() => 'The image shows a sentence about a fox.');
    const before = model.requests.length;
    const image = await textImage([SENTENCE], 'png');
    const result = await withModels.process(em(), member, publicAgent, { fileBuffer: b64(image), fileType: 'png', fileName: 'fox.png', userQuery: 'What animal is mentioned?' });
    expect(result.messageText).toBe('The image shows a sentence about a fox.');
    expect((result.context as any).answeredBy).toEqual({ model: 'gpt-vision-test', kind: 'vision' });
    expect((result.context as any).text).toContain(SENTENCE); // OCR still runs
    const chat = model.requests.slice(before).find((r) => r.path === '/v1/chat/completions')!;
    expect(chat.body.model).toBe('gpt-vision-test');
    const parts = chat.body.messages.at(-1).content as any[];
    expect(parts.find((p) => p.type === 'text').text).toContain('Request: What animal is mentioned?');
    const url: string = parts.find((p) => p.type === 'image_url').image_url.url;
    expect(url.startsWith('data:image/png;base64,')).toBe(true);
    expect(Buffer.from(url.slice('data:image/png;base64,'.length), 'base64').equals(image)).toBe(true);
  });

  it('transcribes audio through /audio/transcriptions and returns the transcript', async () => {
    model.setTranscription('Hello from the recorded meeting.');
    const before = model.requests.length;
    const wav = makeWav(1.5);
    const result = await withModels.process(em(), member, publicAgent, { fileBuffer: b64(wav), fileType: 'wav', fileName: 'meeting.wav' });
    expect(result.messageText).toContain('Transcript of the audio (speech model whisper-1):\nHello from the recorded meeting.');
    const ctx = result.context as any;
    expect(ctx.transcript).toBe('Hello from the recorded meeting.');
    expect(Math.abs(ctx.durationSeconds - 1.5)).toBeLessThan(0.1);
    const sent = model.requests.slice(before).filter((r) => r.path === '/v1/audio/transcriptions');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.fields.model).toBe('whisper-1');
    expect(sent[0]!.body.files[0]).toMatchObject({ field: 'file', filename: 'audio.wav', contentType: 'audio/wav', size: wav.length });
    expect(model.requests.slice(before).some((r) => r.path === '/v1/chat/completions')).toBe(false);
  });

  it("answers the request about audio with the chat model, over the transcript", async () => {
    model.setTranscription('The budget for next year is four million.');
    model.setChatReply((body) => (JSON.stringify(body.messages).includes('four million') ? 'Four million.' : 'I do not know.'));
    const before = model.requests.length;
    const result = await withModels.process(em(), member, publicAgent, { fileBuffer: b64(makeWav(1)), fileType: 'wav', userQuery: 'What is the budget?' });
    expect(result.messageText).toBe('Four million.');
    expect((result.context as any).answeredBy).toEqual({ model: 'gpt-chat-test', kind: 'chat' });
    const chat = model.requests.slice(before).find((r) => r.path === '/v1/chat/completions')!;
    expect(chat.body.model).toBe('gpt-chat-test');
    expect(chat.body.messages.at(-1).content).toContain('Request: What is the budget?');
  });

  it("transcribes a video's audio track (extracted with ffmpeg)", async () => {
    model.setTranscription('Welcome, everyone.');
    const before = model.requests.length;
    const result = await withModels.process(em(), member, publicAgent, { fileBuffer: b64(await makeVideo(['Agenda'], 2)), fileType: 'mp4' });
    const sent = model.requests.slice(before).find((r) => r.path === '/v1/audio/transcriptions')!;
    expect(sent.body.files[0]).toMatchObject({ field: 'file', filename: 'audio.mp3', contentType: 'audio/mpeg' });
    expect(sent.body.files[0].size).toBeGreaterThan(1000);
    expect(result.messageText).toContain('Transcript of the audio track:\nWelcome, everyone.');
    expect(result.messageText).toContain('[0 s] Agenda');
    expect((result.context as any).transcript).toBe('Welcome, everyone.');
  });

  it("answers over a document's text with the agent's chat model", async () => {
    model.setChatReply(() => 'Thirty days.');
    const before = model.requests.length;
    const pdf = makePdf([['Refunds are accepted within thirty days.']]);
    const result = await withModels.process(em(), member, publicAgent, { fileBuffer: b64(pdf), fileType: 'pdf', fileName: 'policy.pdf', userQuery: 'How long for refunds?' });
    expect(result.messageText).toBe('Thirty days.');
    const chat = model.requests.slice(before).find((r) => r.path === '/v1/chat/completions')!;
    const prompt = chat.body.messages.at(-1).content as string;
    expect(prompt).toContain('Refunds are accepted within thirty days.');
    expect(prompt).toContain('Request: How long for refunds?');
    expect(prompt).toContain('File: policy.pdf');
  });

  it('answers 502 UPSTREAM_FAILED when the model endpoint fails', async () => {
    model.failNext('/v1/chat/completions', 500, 2);
    const error = await refusal(withModels.process(em(), member, publicAgent, { fileBuffer: b64(Buffer.from('Some text.')), fileType: 'txt', userQuery: 'Summarize' }));
    expect(error.code).toBe('UPSTREAM_FAILED');
    expect(statusOf(error.code)).toBe(502);
  });
});

describe('bad input', () => {
  const png = () => textImage(['x'], 'png');

  it('not base64 -> 400 on fileBuffer', async () => {
    for (const fileBuffer of ['not base64 at all!', 'aGVsbG8=x', 'a', 'aGVs-G8_']) {
      const error = await refusal(plain.process(em(), member, publicAgent, { fileBuffer, fileType: 'txt' }));
      expect(error.code, fileBuffer).toBe('BAD_USER_INPUT');
      expect(error.details, fileBuffer).toMatchObject({ field: 'fileBuffer' });
    }
  });

  it('accepts line-wrapped base64 and a data: URL prefix', async () => {
    const wrapped = b64(Buffer.from('Wrapped text sample for the reader.')).replace(/(.{16})/g, '$1\n');
    expect((await plain.process(em(), member, publicAgent, { fileBuffer: wrapped, fileType: 'txt' })).messageText).toContain('Wrapped text sample');
    const dataUrl = `data:text/plain;base64,${b64(Buffer.from('From a data URL.'))}`;
    expect((await plain.process(em(), member, publicAgent, { fileBuffer: dataUrl, fileType: 'txt' })).messageText).toContain('From a data URL.');
  });

  it('an extension outside the lists -> 400 naming the supported ones', async () => {
    const error = await refusal(plain.process(em(), member, publicAgent, { fileBuffer: b64(Buffer.from('MZ')), fileType: 'exe' }));
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.details).toMatchObject({ field: 'fileType' });
    expect(error.message).toContain('images jpg, jpeg, png, webp, gif, tiff; audio mp3, wav, m4a, ogg, webm; video mp4, avi, mov, wmv; documents pdf, doc, docx, txt');
  });

  it('magic bytes that contradict the extension -> 400', async () => {
    const image = await png();
    const cases: [string, Buffer][] = [
      ['pdf', image],
      ['jpg', image],
      ['wav', image],
      ['mp4', makeWav(0.2)],
      ['docx', makePdf([['x']])],
      ['txt', Buffer.from([0x68, 0x69, 0x00, 0x01])],
      ['txt', Buffer.from([0xc3, 0x28, 0x41])],
    ];
    for (const [fileType, data] of cases) {
      const error = await refusal(plain.process(em(), member, publicAgent, { fileBuffer: b64(data), fileType }));
      expect(error.code, fileType).toBe('BAD_USER_INPUT');
      expect(error.details, fileType).toMatchObject({ field: 'fileType', reason: 'MAGIC_MISMATCH' });
    }
    const named = await refusal(plain.process(em(), member, publicAgent, { fileBuffer: b64(image), fileType: 'pdf' }));
    expect(named.message).toBe("The file's content does not match its type: it is not a PDF document; its content looks like a PNG image (.png).");
  });

  it('above UPLOAD_MAX_BYTES -> 413, decided before decoding', async () => {
    const small = service({ env: { UPLOAD_MAX_BYTES: '2048' } });
    const error = await refusal(small.process(em(), member, publicAgent, { fileBuffer: b64(Buffer.alloc(2049, 0x61)), fileType: 'txt' }));
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(statusOf(error.code)).toBe(413);
    await expect(small.process(em(), member, publicAgent, { fileBuffer: b64(Buffer.alloc(2048, 0x61)), fileType: 'txt' })).resolves.toMatchObject({ success: true });
  });

  it('a damaged file -> 400 with a clear message', { timeout: 60_000 }, async () => {
    const cases: [string, Buffer, RegExp][] = [
      ['png', corruptPng(), /^The image could not be read: it is damaged or not a valid PNG image\.$/],
      ['pdf', Buffer.from('%PDF-1.4\nthis is not really a pdf\n'), /The PDF could not be read/],
      ['docx', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(60, 1)]), /Word document/],
      ['wav', Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVE', 'latin1'), Buffer.alloc(40, 0xff)]), /The audio could not be read/],
      ['mp4', Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(200, 7)]), /The video could not be read/],
    ];
    for (const [fileType, data, message] of cases) {
      const error = await refusal(plain.process(em(), member, publicAgent, { fileBuffer: b64(data), fileType }));
      expect(error.code, fileType).toBe('BAD_USER_INPUT');
      expect(error.message, fileType).toMatch(message);
      expect(error.details, fileType).toMatchObject({ field: 'fileBuffer' });
    }
  });
});

describe('hostile files', () => {
  it('a decompression bomb (a 400-megapixel PNG of 60 KB) is refused from its header', async () => {
    const bomb = pngBomb(20_000);
    expect(bomb.length).toBeLessThan(200_000);
    const started = Date.now();
    const error = await refusal(plain.process(em(), member, publicAgent, { fileBuffer: b64(bomb), fileType: 'png' }));
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.message).toContain('20000 × 20000 pixels');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a file that needs more memory than the cap is stopped, and the service goes on', async () => {
    // 300 KB of PNG, 64 megapixels (just within the pixel limit): 550+ MB to decode and OCR,
    // where a small image needs about 350 MB.
    const poster = await bigPoster(8000, ['A big white poster with a few words']);
    expect(poster.length).toBeLessThan(1_000_000);
    const capped = service({ limits: { maxMemoryMb: 450 } });
    const error = await refusal(capped.process(em(), member, publicAgent, { fileBuffer: b64(poster), fileType: 'png' }));
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.message).toContain('needs too much memory');
    const after = await capped.process(em(), member, publicAgent, { fileBuffer: b64(await textImage(['Still working'], 'png')), fileType: 'png' });
    expect(after.messageText).toContain('Still working');
  });

  it('a file that takes longer than the deadline is stopped, and the service goes on', async () => {
    // A page dense with text: about 10 s of OCR.
    const lines = Array.from({ length: 60 }, (_, i) => `Line ${i}: the quick brown fox jumps over the lazy dog, again and again`);
    const page = await textImage(lines, 'png', { width: 2200, fontSize: 28 });
    const hurried = service({ limits: { timeoutMs: 3000 } });
    const started = Date.now();
    const error = await refusal(hurried.process(em(), member, publicAgent, { fileBuffer: b64(page), fileType: 'png' }));
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.details).toMatchObject({ reason: 'TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(8000);
    // The same process serves the next file (with the usual deadline: a loaded CI machine may take more than 3 s to start a reader).
    const after = await plain.process(em(), member, publicAgent, { fileBuffer: b64(Buffer.from('Still here.')), fileType: 'txt' });
    expect(after.success).toBe(true);
  });
});

describe('access: the agent read rule', () => {
  const input = (): UniversalInput => ({ fileBuffer: b64(Buffer.from('Hello.')), fileType: 'txt' });

  it('a public agent serves anyone', async () => {
    await expect(plain.process(em(), ANONYMOUS, publicAgent, input(), { ip: '203.0.113.9' })).resolves.toMatchObject({ success: true });
    await expect(plain.process(em(), outsider, publicAgent, input(), { ip: '203.0.113.9' })).resolves.toMatchObject({ success: true });
  });

  it('a private agent asks an anonymous caller for credentials and is NOT_FOUND to other organizations, before reading the input', async () => {
    for (const [auth, code] of [[ANONYMOUS, 'UNAUTHENTICATED'], [outsider, 'NOT_FOUND']] as const) {
      const error = await refusal(plain.process(em(), auth, privateAgent, { fileBuffer: '!!!', fileType: 'exe' }));
      expect(error.code).toBe(code);
    }
    await expect(plain.process(em(), member, privateAgent, input())).resolves.toMatchObject({ success: true });
    const missing = await refusal(plain.process(em(), member, '01900000-0000-7000-8000-000000000000', input()));
    expect(missing.code).toBe('NOT_FOUND');
  });
});

describe('capabilities', () => {
  it('reports what is available, for the start-up log', async () => {
    const { capabilities: caps } = await probeEnvironment(modelConfig);
    expect(caps.ocr.available).toBe(true);
    expect(caps.ffmpeg.available).toBe(true);
    expect(caps.ffprobe.detail).toMatch(/^ffprobe version/);
    expect(caps.vision).toEqual({ available: true, detail: 'vision model gpt-vision-test' });
    expect(caps.transcription).toEqual({ available: true, detail: 'speech model whisper-1' });
    const { capabilities: none } = await probeEnvironment(app.config, { ffmpeg: '/nonexistent/ffmpeg' });
    expect(none.ffmpeg.available).toBe(false);
    expect(none.ffmpeg.detail).toContain('apt-get install ffmpeg');
    expect(none.transcription.detail).toContain('TRANSCRIPTION_MODEL');
    expect(capabilitySummary(none).ffmpeg).toMatch(/^no: /);
  });
});
