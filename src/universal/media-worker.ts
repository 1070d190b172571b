/**
 * Child-process entry of the media extraction (see media.ts): receives one job over IPC,
 * reads the file (image, OCR, container metadata, ffprobe/ffmpeg: all in providers/), sends one
 * reply and exits. A separate process rather than a thread because the image library and ffmpeg are native code:
 * a crash or a runaway allocation there ends this process, never the server.
 */
import { readFile } from 'node:fs/promises';
import { readContainerMetadata } from '../providers/audio-metadata.ts';
import { imageMetadata, resizedImage, useOneImageAtATime, type ImageMetadata } from '../providers/image.ts';
import { OCR_MISSING } from '../providers/media-probe.ts';
import { extractAudioTrack, extractKeyframes, ffprobe, keyframeTimes, ToolError, type MediaInput, type Probe } from '../providers/ffmpeg.ts';
import { typeOfExtension } from '../files/file-types.ts';
import { formatOf } from './formats.ts';
import { createOcr, prepareForOcr, type Ocr } from '../providers/ocr.ts';
import type { KeyframeText, MediaErrorCode, MediaJob, MediaReply, MediaResult } from './protocol.ts';

class JobError extends Error {
  constructor(
    readonly code: MediaErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Keyframes read by OCR per video, spread over its length. */
const MAX_KEYFRAMES = 6;
/** Largest side of an image handed to a vision model (OpenAI scales to this anyway). */
const VISION_MAX_SIDE = 2048;
const VISION_MAX_BYTES = 8 * 1024 * 1024;
/** The image library's format names that a vision model takes as they are. */
const VISION_FORMATS: ReadonlySet<string> = new Set(['png', 'jpeg', 'webp', 'gif']);

useOneImageAtATime();

let deadline = Date.now() + 60_000;
const remaining = () => Math.max(1, deadline - Date.now());

let sent = false;
function send(reply: MediaReply): void {
  if (sent) return;
  sent = true;
  if (!process.send) process.exit(2);
  process.send(reply, undefined, {}, () => process.exit(0));
}

function describe(error: unknown): string | undefined {
  if (error === undefined) return undefined;
  if (!(error instanceof Error)) return String(error);
  const extra = error instanceof ToolError && error.stderr ? `\n${error.stderr}` : '';
  return `${error.name}: ${error.message}\n${error.stack ?? ''}${extra}`;
}

const crash = (error: unknown) => send({ ok: false, code: 'CORRUPT', message: 'The file could not be read.', detail: describe(error) });
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);
// The server went away (or killed the job): nothing is waiting for the answer.
process.on('disconnect', () => process.exit(0));

process.once('message', (job: MediaJob) => {
  deadline = Date.now() + job.deadlineMs;
  setTimeout(() => {
    send({ ok: false, code: 'TIMEOUT', message: 'The file took too long to process.' });
    setTimeout(() => process.exit(3), 1000);
  }, job.deadlineMs);
  run(job).then(
    (result) => send({ ok: true, result }),
    (error: unknown) => {
      if (error instanceof JobError) send({ ok: false, code: error.code, message: error.message, detail: describe(error.cause) });
      else if (error instanceof ToolError && error.kind === 'timeout') send({ ok: false, code: 'TIMEOUT', message: 'The file took too long to process.', detail: describe(error) });
      else send({ ok: false, message: 'Media processing failed.', detail: describe(error) });
    },
  );
});

async function run(job: MediaJob): Promise<MediaResult> {
  if (job.kind === 'image') return image(job);
  if (job.kind === 'audio') return audio(job);
  return video(job);
}

// ---- images ----

async function image(job: MediaJob): Promise<MediaResult> {
  const label = formatOf(job.type).label;
  const corrupt = (cause: unknown) => new JobError('CORRUPT', `The image could not be read: it is damaged or not a valid ${label}.`, { cause });
  let meta: ImageMetadata;
  try {
    meta = await imageMetadata(job.path);
  } catch (error) {
    throw corrupt(error);
  }
  const width = meta.width ?? 0;
  const height = meta.pageHeight ?? meta.height ?? 0;
  if (!width || !height) throw corrupt(new Error('no dimensions'));
  if (width * height > job.maxPixels) {
    throw new JobError('TOO_LARGE', `The image is too large to process: ${width} × ${height} pixels (the limit is ${Math.round(job.maxPixels / 1e6)} megapixels).`);
  }
  const rotated = (meta.orientation ?? 1) >= 5;
  const metadata: Record<string, unknown> = {
    width: rotated ? height : width,
    height: rotated ? width : height,
    format: meta.format,
    channels: meta.channels,
    hasAlpha: meta.hasAlpha ?? false,
    colorSpace: meta.space,
    ...(meta.density ? { density: meta.density } : {}),
    ...(meta.pages && meta.pages > 1 ? { pages: meta.pages } : {}),
    ...(meta.orientation && meta.orientation !== 1 ? { exifOrientation: meta.orientation } : {}),
  };
  const result: MediaResult = { metadata, notes: [] };
  // Decoding happens here, once: a truncated or damaged image fails now, as the sender's fault.
  const starting = job.ocr ? createOcr(job.ocr) : null;
  try {
    let prepared: Buffer;
    try {
      prepared = await prepareForOcr(job.path, job.maxPixels);
    } catch (error) {
      throw corrupt(error);
    }
    if (starting) {
      const ocr = await starting;
      const { text, confidence } = await ocr.read(prepared);
      result.ocrText = text;
      metadata.ocrConfidence = confidence;
    } else {
      result.notes.push(`OCR is not available on this server (${OCR_MISSING}): no text was read from the image.`);
    }
  } finally {
    if (starting) await starting.then((ocr) => ocr.close()).catch(() => {});
  }
  if (job.wantVisionImage) result.visionImage = await visionImage(job, meta, width, height);
  return result;
}

/** The original when a vision model takes it as it is; otherwise a PNG or JPEG of at most 2048 px. */
async function visionImage(job: MediaJob, meta: ImageMetadata, width: number, height: number): Promise<{ mimeType: string; data: Uint8Array }> {
  const original = await readFile(job.path);
  const mimeType = meta.format && VISION_FORMATS.has(meta.format) ? typeOfExtension(meta.format)?.mimeType : undefined;
  const upright = (meta.orientation ?? 1) === 1;
  if (mimeType && upright && Math.max(width, height) <= VISION_MAX_SIDE && original.length <= VISION_MAX_BYTES && !(meta.pages && meta.pages > 1)) {
    return { mimeType, data: original };
  }
  return resizedImage(job.path, { maxPixels: job.maxPixels, maxSide: VISION_MAX_SIDE, hasAlpha: meta.hasAlpha ?? false });
}

// ---- audio ----

async function audio(job: MediaJob): Promise<MediaResult> {
  const label = formatOf(job.type).label;
  const notes: string[] = [];
  let metadata: Record<string, unknown> = {};
  let duration: number | undefined;
  let readError: unknown;
  try {
    const mm = await readContainerMetadata(job.path);
    const f = mm.format;
    duration = finite(f.duration);
    metadata = compact({
      container: f.container,
      codec: f.codec,
      codecProfile: f.codecProfile,
      sampleRate: f.sampleRate,
      channels: f.numberOfChannels,
      bitsPerSample: f.bitsPerSample,
      bitrate: f.bitrate ? Math.round(f.bitrate) : undefined,
      lossless: f.lossless,
      title: mm.common.title,
      artist: mm.common.artist,
      album: mm.common.album,
    });
  } catch (error) {
    readError = error;
  }
  // ffprobe, when installed, has the last word on the stream's facts: it applies edit lists
  // (AAC priming) and reads the real channel count, where container headers can disagree.
  if (job.tools.ffprobe) {
    try {
      const probe = await ffprobe(job.tools.ffprobe, mediaInput(job), remaining());
      const a = probe.streams.find((s) => s.codec_type === 'audio');
      if (a) {
        duration = finite(Number(a.duration ?? probe.format.duration)) ?? finite(Number(probe.format.duration)) ?? duration;
        metadata = compact({
          container: probe.format.format_name,
          codec: a.codec_long_name ?? a.codec_name,
          ...metadata,
          codecId: a.codec_name,
          sampleRate: num(a.sample_rate) ?? metadata.sampleRate,
          channels: a.channels ?? metadata.channels,
          channelLayout: a.channel_layout,
          bitrate: metadata.bitrate ?? num(a.bit_rate ?? probe.format.bit_rate),
        });
      }
    } catch (error) {
      if (error instanceof ToolError && error.kind === 'timeout') throw error;
      readError ??= error;
    }
  }
  if (duration === undefined && metadata.sampleRate === undefined) {
    throw new JobError('CORRUPT', `The audio could not be read: it is damaged or not a valid ${label}.`, { cause: readError });
  }
  if (duration === undefined) notes.push('The duration of this audio could not be determined.');
  return { metadata, durationSeconds: duration, hasAudio: true, notes };
}

// ---- video ----

async function video(job: MediaJob): Promise<MediaResult> {
  const label = formatOf(job.type).label;
  const notes: string[] = [];
  const { ffprobe: probeTool, ffmpeg: ffmpegTool } = job.tools;
  if (!probeTool) {
    notes.push('ffprobe is not installed on this server: the video\'s resolution and codecs are unknown.');
    const partial = await containerMetadata(job.path);
    if (!ffmpegTool) notes.push('ffmpeg is not installed on this server: no text was read from keyframes and the audio track was not extracted.');
    return { metadata: partial.metadata, durationSeconds: partial.duration, notes };
  }

  let probe: Probe;
  try {
    probe = await ffprobe(probeTool, mediaInput(job), remaining());
  } catch (error) {
    if (error instanceof ToolError && error.kind === 'timeout') throw error;
    throw new JobError('CORRUPT', `The video could not be read: it is damaged or not a valid ${label}.`, { cause: error });
  }
  const v = probe.streams.find((s) => s.codec_type === 'video');
  const a = probe.streams.find((s) => s.codec_type === 'audio');
  if (!v) throw new JobError('CORRUPT', `The video could not be read: it has no video stream.`);
  const duration = finite(Number(probe.format.duration ?? v.duration));
  const metadata = compact({
    container: probe.format.format_long_name ?? probe.format.format_name,
    width: v.width,
    height: v.height,
    videoCodec: v.codec_name,
    videoCodecName: v.codec_long_name,
    frameRate: frameRate(v.avg_frame_rate) ?? frameRate(v.r_frame_rate),
    audioCodec: a?.codec_name,
    audioSampleRate: num(a?.sample_rate),
    audioChannels: a?.channels,
    bitrate: num(probe.format.bit_rate),
    hasAudio: Boolean(a),
  });
  const result: MediaResult = { metadata, durationSeconds: duration, hasAudio: Boolean(a), notes };

  if (!ffmpegTool) {
    notes.push('ffmpeg is not installed on this server: no text was read from keyframes and the audio track was not extracted.');
    return result;
  }
  if (job.ocr) {
    const startTime = Number(probe.format.start_time ?? 0) || 0;
    const times = await keyframeTimes(probeTool, mediaInput(job), startTime, remaining());
    const step = Math.max(1, Math.ceil(times.length / MAX_KEYFRAMES));
    const frames = times.length ? await extractKeyframes(ffmpegTool, mediaInput(job), job.workDir, step, MAX_KEYFRAMES, remaining()) : [];
    const keyframes: KeyframeText[] = [];
    if (frames.length) {
      const ocr: Ocr = await createOcr(job.ocr);
      try {
        const seen = new Set<string>();
        for (const [i, frame] of frames.entries()) {
          const { text } = await ocr.read(await prepareForOcr(frame, job.maxPixels));
          const key = text.replace(/\s+/g, ' ').toLowerCase();
          if (!text || seen.has(key)) continue;
          seen.add(key);
          keyframes.push({ timeSeconds: round(times[i * step] ?? 0, 3), text });
        }
      } finally {
        await ocr.close();
      }
    }
    result.keyframes = keyframes;
    result.keyframesRead = frames.length;
  } else {
    notes.push(`OCR is not available on this server (${OCR_MISSING}): no text was read from keyframes.`);
  }
  if (a && job.wantAudioTrack) {
    try {
      result.audioTrack = await extractAudioTrack(ffmpegTool, mediaInput(job), job.workDir, remaining());
    } catch (error) {
      if (error instanceof ToolError && error.kind === 'timeout') throw error;
      notes.push('The audio track could not be extracted, so it was not transcribed.');
    }
  }
  return result;
}

/** Without ffprobe: what music-metadata can tell from the container (duration for MP4, MOV, WMV). */
async function containerMetadata(path: string): Promise<{ metadata: Record<string, unknown>; duration?: number }> {
  try {
    const mm = await readContainerMetadata(path);
    const duration = finite(mm.format.duration);
    const video = mm.format.trackInfo?.find((t) => t.video);
    return {
      duration,
      metadata: compact({
        container: mm.format.container,
        width: video?.video?.pixelWidth,
        height: video?.video?.pixelHeight,
        audioCodec: mm.format.codec,
        audioSampleRate: mm.format.sampleRate,
        audioChannels: mm.format.numberOfChannels,
      }),
    };
  } catch {
    return { metadata: {} };
  }
}

// ---- helpers ----

function mediaInput(job: MediaJob): MediaInput {
  return { path: job.path, demuxer: formatOf(job.type).demuxer ?? 'mov' };
}

function finite(n: number | undefined): number | undefined {
  return n !== undefined && Number.isFinite(n) && n >= 0 ? round(n, 3) : undefined;
}

function num(s: string | number | undefined): number | undefined {
  const n = Number(s);
  return s === undefined || s === '' || !Number.isFinite(n) ? undefined : n;
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function frameRate(rate: string | undefined): number | undefined {
  if (!rate) return undefined;
  const [n, d] = rate.split('/').map(Number);
  if (!n || !d) return undefined;
  return round(n / d, 3);
}

function compact(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined && v !== null && v !== ''));
}
