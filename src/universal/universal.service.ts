/**
 * The universal processor (interface.md endpoint 8): an image, audio, video or document in,
 * its text, its facts and, when models are configured, an answer to the user's request out.
 *
 * Order of work: access (the agent read rule), the cheap checks (type, base64, size, magic
 * bytes), extraction away from the server's thread (documents in the loaders' worker, media in
 * a child process, both with a deadline and a memory cap), then the models. Without models the
 * answer is the extracted content itself, introduced as such; nothing is ever invented.
 */
import { rm, mkdtemp, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isOutsider } from '../access.ts';
import type { Auth } from '../auth/auth.ts';
import type { AgentService } from '../agents/agent.service.ts';
import type { Agent } from '../agents/agent.entity.ts';
import type { Config } from '../config.ts';
import type { Em } from '../db/orm.ts';
import { AppError, badInput } from '../errors.ts';
import { loadDocument, LoaderError } from '../ingestion/loaders/index.ts';
import type { Limits } from '../limits/limits.ts';
import { ChatError, type ChatModel, type ChatTurn, type ContentPart } from '../providers/chat.ts';
import { probeEnvironment, type Capabilities, type Environment, type ToolOptions } from './capabilities.ts';
import { checkBase64, formatOf, normalizeFileType, sniffType, SUPPORTED_LIST, type FileKind, type FileType } from './formats.ts';
import { MediaError, runMediaJob } from './media.ts';
import type { KeyframeText, MediaResult } from './protocol.ts';
import type { Logger } from '../logger.ts';
import { transcribe, TranscriptionError } from '../providers/transcription.ts';

export interface UniversalInput {
  /** The file, base64 (standard alphabet; a `data:…;base64,` prefix and line breaks are accepted). */
  fileBuffer: string;
  /** The extension: `png`, `.PNG`… (see SUPPORTED_TYPES). */
  fileType: string;
  fileName?: string | null;
  /** What to do with the file; blank: only extract. */
  userQuery?: string | null;
}

export interface UniversalResult {
  success: boolean;
  messageText: string;
  context: Record<string, unknown>;
}

export interface UniversalOptions {
  /** Where failures of the model endpoints this service calls itself (speech) are logged. */
  logger?: Logger;
  /** Executables; `null` disables one (as if not installed). Default: `ffmpeg`/`ffprobe` from PATH. */
  tools?: ToolOptions;
  limits?: {
    /** Deadline of one extraction (default 60 s for media, 30 s for documents). */
    timeoutMs?: number;
    /** Memory cap of one extraction in MB (default 1024 for media, 512 for documents). */
    maxMemoryMb?: number;
    /** Largest image in pixels, checked from its header before decoding (default 64 megapixels). */
    maxPixels?: number;
  };
}

/** Extracted text shown in messageText when no model answers. */
export const MESSAGE_TEXT_CHARS = 4_000;
/** Extracted text kept in context.text, and given to the chat model. */
export const CONTEXT_TEXT_CHARS = 20_000;

const DEFAULT_MEDIA_TIMEOUT_MS = 60_000;
const DEFAULT_DOCUMENT_TIMEOUT_MS = 30_000;
const DEFAULT_MEDIA_MEMORY_MB = 1024;
const DEFAULT_DOCUMENT_MEMORY_MB = 512;
const DEFAULT_MAX_PIXELS = 64_000_000;

/** What was read from the file, before any model. */
interface Extraction {
  kind: FileKind;
  metadata: Record<string, unknown>;
  /** One line of facts: "PNG image, 900 × 160 pixels." */
  summary: string;
  /** All text found (OCR, keyframes, transcript, document), for context.text and the model. */
  text: string;
  /** How `text` is introduced in messageText. */
  textLabel: string;
  /** Said when there is no text. */
  noText: string;
  pageCount?: number;
  durationSeconds?: number;
  transcript?: string | null;
  keyframes?: KeyframeText[];
  visionImage?: { mimeType: string; data: Uint8Array };
  notes: string[];
}

/** Audio waiting for the speech model: the file itself, or a video's extracted track. */
interface AudioUpload {
  data: Uint8Array;
  fileName: string;
  mimeType: string;
}

/** An extraction, with what is left to do once it is in: transcription, and removing temporary files. */
type Extracted = Extraction & { pendingAudio?: AudioUpload; cleanup?: () => Promise<void> };

interface ValidFile {
  type: FileType;
  kind: FileKind;
  mimeType: string;
  label: string;
  data: Buffer;
  fileName: string;
}

export class UniversalService {
  private environment: Promise<Environment> | null = null;
  constructor(
    private readonly config: Config,
    private readonly chat: ChatModel | null,
    private readonly agents: AgentService,
    private readonly limits: Limits,
    private readonly options: UniversalOptions = {},
  ) {}

  /** What this process can do (ffmpeg, OCR, models), probed once. */
  async capabilities(): Promise<Capabilities> {
    return (await this.env()).capabilities;
  }

  /**
   * Reads the file and answers `userQuery` about it.
   * Throws UNAUTHENTICATED (no credentials for a private or unknown agent), NOT_FOUND (agent), FORBIDDEN (the page's origin), RATE_LIMITED, BAD_USER_INPUT (not base64, unknown type, magic
   * bytes that contradict the type, a damaged file, a file that takes too long), PAYLOAD_TOO_LARGE
   * (above UPLOAD_MAX_BYTES, or needing too much memory), PAYMENT_REQUIRED (monthly allowance,
   * when a model is called), UPSTREAM_FAILED (the model endpoint failed).
   */
  async process(em: Em, auth: Auth, agentIdOrHandle: string, input: UniversalInput, opts: { ip?: string; signal?: AbortSignal; origin?: string } = {}): Promise<UniversalResult> {
    const agent = await this.agents.getToUse(em, auth, agentIdOrHandle, opts.origin);
    const outsider = isOutsider(auth, agent);
    // No visitor id here: the address is the visitor.
    if (outsider) await this.limits.admitVisitor(em, { scope: agent.id, visitorId: null, ip: opts.ip ?? 'unknown', what: 'files' });
    const file = this.validate(input);
    const env = await this.env();
    const userQuery = (input.userQuery ?? '').trim();

    const extraction = await this.extract(file, env, userQuery !== '');
    let answer: { text: string; model: string; by: 'vision' | 'chat' } | null = null;
    const wantsAnswer = userQuery !== '' && this.chat !== null;
    const canSee = wantsAnswer && extraction.visionImage !== undefined && env.capabilities.vision.available;
    /** The period of the query reserved for the model calls, once one is. */
    let reserved: string | null = null;
    try {
      if (extraction.pendingAudio) {
        reserved = await this.limits.queries.reserve(em, agent.organization.id);
        await this.transcribeInto(extraction, opts.signal);
      }
      // A model answers from what was found: with no text (and no image to look at) there is nothing to answer from.
      if (wantsAnswer && (canSee || extraction.text.trim() !== '')) {
        reserved ??= await this.limits.queries.reserve(em, agent.organization.id);
        answer = canSee ? await this.askVision(agent, file, extraction, userQuery, opts.signal) : await this.askChat(agent, file, extraction, userQuery, opts.signal);
      }
    } catch (error) {
      if (reserved) await this.limits.queries.refund(em, agent.organization.id, reserved).catch(() => {});
      throw upstream(error);
    } finally {
      if (extraction.cleanup) await extraction.cleanup();
    }

    if (answer && !answer.text) {
      extraction.notes.push(`The model (${answer.model}) answered with nothing; the extracted content is returned instead.`);
      answer = null;
    } else if (userQuery !== '' && !answer) {
      extraction.notes.push(
        this.chat === null
          ? 'No model is configured to answer the request (OPENAI_BASE_URL / OPENAI_API_KEY); the extracted content is returned instead.'
          : 'The file has no text to answer the request from; its facts are returned instead.',
      );
    }
    return {
      success: true,
      messageText: answer ? answer.text : describe(extraction),
      context: this.context(file, extraction, env.capabilities, answer),
    };
  }

  private env(): Promise<Environment> {
    return (this.environment ??= probeEnvironment(this.config, this.options.tools));
  }

  // ---- validation: nothing here parses the file ----

  private validate(input: UniversalInput): ValidFile {
    const type = normalizeFileType(input.fileType ?? '');
    if (!type) {
      throw badInput(`Files of type "${String(input.fileType).slice(0, 40)}" are not supported. Supported extensions: ${SUPPORTED_LIST}.`, { field: 'fileType' });
    }
    const format = formatOf(type);
    const base64 = checkBase64(input.fileBuffer ?? '');
    if (!base64.ok) throw badInput(base64.reason, { field: 'fileBuffer' });
    const limit = this.config.uploadMaxBytes;
    if (base64.decodedBytes > limit) {
      throw new AppError('PAYLOAD_TOO_LARGE', `The file is larger than the limit of ${limit} bytes.`, { field: 'fileBuffer', limit, size: base64.decodedBytes });
    }
    const data = Buffer.from(base64.text, 'base64');
    if (data.length === 0) throw badInput('The file is empty.', { field: 'fileBuffer' });
    if (!format.sniff(data)) {
      const actual = sniffType(data);
      const seen = actual && actual !== 'txt' ? `; its content looks like a ${formatOf(actual).label} (.${actual})` : '';
      const what = type === 'txt' ? 'is not UTF-8 text' : `is not a ${format.label}`;
      throw badInput(`The file's content does not match its type: it ${what}${seen}.`, { field: 'fileType', reason: 'MAGIC_MISMATCH', ...(actual ? { detected: actual } : {}) });
    }
    const fileName = (input.fileName ?? '').trim().split(/[/\\]/).pop() || `file.${type}`;
    return { type, kind: format.kind, mimeType: format.mimeType, label: format.label, data, fileName };
  }

  // ---- extraction ----

  private async extract(file: ValidFile, env: Environment, wantsAnswer: boolean): Promise<Extracted> {
    if (file.kind === 'document') return this.document(file);

    const transcription = env.capabilities.transcription.available;
    const dir = await mkdtemp(path.join(tmpdir(), 'agentbase-universal-'));
    const cleanup = () => rm(dir, { recursive: true, force: true });
    try {
      const filePath = path.join(dir, `input.${file.type}`);
      await writeFile(filePath, file.data);
      const media = await runMediaJob(
        {
          kind: file.kind,
          path: filePath,
          type: file.type,
          workDir: dir,
          tools: env.tools,
          ocr: env.ocr,
          maxPixels: this.options.limits?.maxPixels ?? DEFAULT_MAX_PIXELS,
          wantVisionImage: wantsAnswer && env.capabilities.vision.available && this.chat !== null,
          wantAudioTrack: transcription,
        },
        { timeoutMs: this.options.limits?.timeoutMs ?? DEFAULT_MEDIA_TIMEOUT_MS, maxMemoryMb: this.options.limits?.maxMemoryMb ?? DEFAULT_MEDIA_MEMORY_MB },
      );
      const extraction = fromMedia(file, media);
      if (file.kind === 'audio' && transcription) {
        return { ...extraction, pendingAudio: { data: file.data, fileName: `audio.${file.type}`, mimeType: file.mimeType }, cleanup };
      }
      if (file.kind === 'video' && media.audioTrack) {
        const track = media.audioTrack;
        return { ...extraction, pendingAudio: { data: await readFile(track.path), fileName: track.fileName, mimeType: track.mimeType }, cleanup };
      }
      if (file.kind !== 'image') extraction.notes.push(...transcriptionNotes(file.kind, media, env.capabilities));
      await cleanup();
      return extraction;
    } catch (error) {
      await cleanup();
      throw mediaError(error, file);
    }
  }

  private async document(file: ValidFile): Promise<Extraction> {
    const notes: string[] = [];
    let text = '';
    let metadata: Record<string, unknown> = {};
    let pageCount: number | undefined;
    try {
      const doc = await loadDocument(file.data, file.mimeType, {
        timeoutMs: this.options.limits?.timeoutMs ?? DEFAULT_DOCUMENT_TIMEOUT_MS,
        maxMemoryMb: Math.min(this.options.limits?.maxMemoryMb ?? DEFAULT_DOCUMENT_MEMORY_MB, DEFAULT_DOCUMENT_MEMORY_MB),
      });
      text = doc.text;
      metadata = { ...doc.metadata, ...(doc.title ? { title: doc.title } : {}) };
      const pages = doc.metadata.pageCount ?? doc.pages?.length;
      if (typeof pages === 'number') pageCount = pages;
    } catch (error) {
      if (!(error instanceof LoaderError)) throw error;
      if (error.code === 'EMPTY') notes.push(error.message);
      else if (error.code === 'TOO_LARGE') throw new AppError('PAYLOAD_TOO_LARGE', error.message, { field: 'fileBuffer', reason: 'TOO_LARGE' });
      else throw badInput(error.message, { field: 'fileBuffer', reason: error.code });
    }
    const facts = [pageCount !== undefined ? plural(pageCount, 'page') : null, `${text.length.toLocaleString('en-US')} characters of text`].filter(Boolean);
    return {
      kind: 'document',
      metadata,
      summary: `${capitalize(file.label)}: ${facts.join(', ')}.`,
      text,
      textLabel: 'Text of the document',
      // The loader's own words (e.g. "may consist of scanned images") are in the notes then.
      noText: notes.length ? '' : 'The document has no text.',
      pageCount,
      notes,
    };
  }

  private async transcribeInto(extraction: Extracted, signal?: AbortSignal): Promise<void> {
    const audio = extraction.pendingAudio!;
    const transcript = await transcribe(this.config.openai!, this.config.models.transcription!, audio, signal, this.options.logger);
    extraction.transcript = transcript;
    const label = extraction.kind === 'video' ? 'Transcript of the audio track' : 'Transcript of the audio';
    const section = transcript ? `${label}:\n${transcript}` : '';
    if (extraction.kind === 'audio') {
      extraction.text = transcript;
      extraction.textLabel = `Transcript of the audio (speech model ${this.config.models.transcription})`;
      extraction.noText = 'The speech model found no speech in the audio.';
    } else if (section) {
      extraction.text = extraction.text ? `${extraction.text}\n\n${section}` : section;
    } else {
      extraction.notes.push('The speech model found no speech in the audio track.');
    }
  }

  // ---- models ----

  private async askVision(agent: Agent, file: ValidFile, extraction: Extraction, userQuery: string, signal?: AbortSignal) {
    const image = extraction.visionImage!;
    const model = this.config.models.vision!;
    const ocr = extraction.text.trim() ? `\n\nText read from the image by OCR (it may contain errors):\n"""\n${cap(extraction.text, CONTEXT_TEXT_CHARS).text}\n"""` : '';
    const parts: ContentPart[] = [
      { type: 'text', text: `Image: ${file.fileName} (${extraction.summary})${ocr}\n\nRequest: ${userQuery}` },
      { type: 'image_url', image_url: { url: `data:${image.mimeType};base64,${Buffer.from(image.data).toString('base64')}` } },
    ];
    const turns: ChatTurn[] = [
      { role: 'system', content: 'You answer a request about an image the user uploaded. Describe only what the image shows; when it does not show what is asked, say so.' },
      { role: 'user', content: parts },
    ];
    const { text } = await this.chat!.complete(turns, { model, temperature: agent.temperature }, signal);
    return { text: text.trim(), model, by: 'vision' as const };
  }

  private async askChat(agent: Agent, file: ValidFile, extraction: Extraction, userQuery: string, signal?: AbortSignal) {
    const model = this.config.models[agent.modelName] ?? this.config.models.model_3_5_turbo;
    const content = cap(extraction.text, CONTEXT_TEXT_CHARS);
    const turns: ChatTurn[] = [
      {
        role: 'system',
        content:
          'You answer a request about a file the user uploaded, using only the content extracted from it below. ' +
          'The content was extracted automatically (OCR, speech transcription or a document reader) and may contain errors. ' +
          'When the content does not answer the request, say so; never invent content.',
      },
      {
        role: 'user',
        content:
          `File: ${file.fileName} (${extraction.summary})\n\n${extraction.textLabel || 'Content found in the file'}${content.truncated ? ` (the first ${CONTEXT_TEXT_CHARS.toLocaleString('en-US')} characters)` : ''}:\n"""\n${content.text}\n"""\n\n` +
          `Request: ${userQuery}`,
      },
    ];
    const { text } = await this.chat!.complete(turns, { model, temperature: agent.temperature }, signal);
    return { text: text.trim(), model, by: 'chat' as const };
  }

  // ---- the response ----

  private context(file: ValidFile, x: Extraction, capabilities: Capabilities, answer: { model: string; by: 'vision' | 'chat' } | null): Record<string, unknown> {
    const text = cap(x.text, CONTEXT_TEXT_CHARS);
    return {
      fileName: file.fileName,
      fileType: file.type,
      kind: x.kind,
      mimeType: file.mimeType,
      size: file.data.length,
      metadata: x.metadata,
      text: text.text,
      textLength: x.text.length,
      textTruncated: text.truncated,
      ...(x.pageCount !== undefined ? { pageCount: x.pageCount } : {}),
      ...(x.durationSeconds !== undefined ? { durationSeconds: x.durationSeconds } : {}),
      ...(x.kind === 'audio' || x.kind === 'video' ? { transcript: x.transcript ?? null } : {}),
      ...(x.keyframes ? { keyframes: x.keyframes } : {}),
      answeredBy: answer ? { model: answer.model, kind: answer.by } : null,
      notes: x.notes,
      capabilities,
    };
  }
}

// ---- helpers ----

function fromMedia(file: ValidFile, media: MediaResult): Extraction {
  const m = media.metadata;
  const notes = [...media.notes];
  const duration = media.durationSeconds;
  if (file.kind === 'image') {
    return {
      kind: 'image',
      metadata: m,
      summary: `${capitalize(file.label)}, ${m.width} × ${m.height} pixels.`,
      text: media.ocrText ?? '',
      textLabel: 'Text found in the image by OCR',
      noText: media.ocrText === undefined ? 'No text was read from the image.' : 'No text was found in the image by OCR.',
      visionImage: media.visionImage,
      notes,
    };
  }
  if (file.kind === 'audio') {
    const facts = [duration !== undefined ? seconds(duration) : null, m.codec, m.sampleRate ? `${m.sampleRate} Hz` : null, channels(m.channels)].filter(Boolean);
    return {
      kind: 'audio',
      metadata: m,
      summary: `${capitalize(file.label)}: ${facts.join(', ')}.`,
      text: '',
      textLabel: 'Transcript of the audio',
      noText: '',
      durationSeconds: duration,
      transcript: null,
      notes,
    };
  }
  const keyframes = media.keyframes;
  const size = m.width && m.height ? `${m.width} × ${m.height}` : null;
  const codecs = [m.videoCodec ? `${m.videoCodec} video` : null, m.audioCodec ? `${m.audioCodec} audio` : media.hasAudio === false ? 'no audio' : null];
  const facts = [duration !== undefined ? seconds(duration) : null, size, ...codecs].filter(Boolean);
  const ocr = keyframes?.length ? `Text found on keyframes by OCR:\n${keyframes.map((k) => `[${seconds(k.timeSeconds)}] ${k.text}`).join('\n')}` : '';
  if (keyframes && !keyframes.length) notes.push(`No text was found by OCR on the ${plural(media.keyframesRead ?? 0, 'keyframe')} read.`);
  return {
    kind: 'video',
    metadata: m,
    summary: `${capitalize(file.label)}: ${facts.join(', ') || 'no details available'}.`,
    text: ocr,
    textLabel: '',
    noText: '',
    durationSeconds: duration,
    transcript: null,
    keyframes: keyframes ?? [],
    notes,
  };
}

function transcriptionNotes(kind: FileKind, media: MediaResult, capabilities: Capabilities): string[] {
  if (kind === 'audio') {
    return ['Transcription needs a configured speech model (TRANSCRIPTION_MODEL on an OpenAI-compatible endpoint); none is configured, so there is no transcript.'];
  }
  if (media.hasAudio === false) return ['The video has no audio track.'];
  if (!capabilities.transcription.available) {
    return ['The audio track was not transcribed: transcription needs a configured speech model (TRANSCRIPTION_MODEL on an OpenAI-compatible endpoint), and none is configured.'];
  }
  if (!capabilities.ffmpeg.available) return ['The audio track was not transcribed: extracting it needs ffmpeg, which is not installed on this server.'];
  return [];
}

/** messageText when no model answered: the facts, the text (capped), and what is missing. */
function describe(x: Extraction): string {
  const parts = [x.summary];
  const body = x.text.trim();
  if (body) {
    const shown = cap(body, MESSAGE_TEXT_CHARS);
    // A video's text brings its own headings (keyframes, transcript).
    parts.push(x.textLabel ? `${x.textLabel}:\n${shown.text}` : shown.text);
    if (shown.truncated) {
      parts.push(`(The first ${MESSAGE_TEXT_CHARS.toLocaleString('en-US')} of ${body.length.toLocaleString('en-US')} characters; context.text holds up to ${CONTEXT_TEXT_CHARS.toLocaleString('en-US')}.)`);
    }
  } else if (x.noText) {
    parts.push(x.noText);
  }
  parts.push(...x.notes);
  return parts.join('\n\n');
}

function cap(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--; // never split a surrogate pair
  return { text: text.slice(0, end), truncated: true };
}

function mediaError(error: unknown, file: ValidFile): unknown {
  if (!(error instanceof MediaError)) return error;
  switch (error.code) {
    case 'TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', error.message, { field: 'fileBuffer', reason: 'TOO_LARGE' });
    case 'BUSY':
      return new AppError('RATE_LIMITED', error.message);
    case 'TIMEOUT':
      return badInput(`${error.message} The ${file.label} may be damaged or too complex.`, { field: 'fileBuffer', reason: 'TIMEOUT' });
    default:
      return badInput(error.message, { field: 'fileBuffer', reason: 'CORRUPT' });
  }
}

function upstream(error: unknown): unknown {
  if (error instanceof ChatError || error instanceof TranscriptionError) return new AppError('UPSTREAM_FAILED', error.message, undefined, error);
  return error;
}

function seconds(n: number): string {
  return `${n.toFixed(n < 10 ? 2 : 1).replace(/\.?0+$/, '') || '0'} s`;
}

function channels(n: unknown): string | null {
  if (typeof n !== 'number') return null;
  return n === 1 ? 'mono' : n === 2 ? 'stereo' : `${n} channels`;
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
