/**
 * Real media files made by the tests: text rendered into images with sharp (SVG text ->
 * raster), a WAV written byte by byte, an MP4 made by ffmpeg from a rendered image and a sine
 * tone, and hostile PNGs (a decompression bomb, a huge noisy image).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Black text on white, one line per entry, in DejaVu Sans (the fonts Debian ships with fontconfig). */
export function textSvg(lines: string[], opts: { width?: number; fontSize?: number } = {}): Buffer {
  const fontSize = opts.fontSize ?? 40;
  const lineHeight = Math.round(fontSize * 1.5);
  const width = opts.width ?? 1000;
  const height = lineHeight * lines.length + fontSize;
  const text = lines.map((line, i) => `<text x="30" y="${fontSize + i * lineHeight + 10}">${escapeXml(line)}</text>`).join('');
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
      `<rect width="100%" height="100%" fill="#ffffff"/>` +
      `<g font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="${fontSize}" fill="#000000">${text}</g></svg>`,
  );
}

export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'gif' | 'tiff';

export async function textImage(lines: string[], format: ImageFormat, opts: { width?: number; fontSize?: number } = {}): Promise<Buffer> {
  const img = sharp(textSvg(lines, opts)).flatten({ background: '#ffffff' });
  switch (format) {
    case 'png':
      return img.png().toBuffer();
    case 'jpeg':
      return img.jpeg({ quality: 90 }).toBuffer();
    case 'webp':
      return img.webp({ quality: 90 }).toBuffer();
    case 'gif':
      return img.gif().toBuffer();
    case 'tiff':
      return img.tiff().toBuffer();
  }
}

/** A 16-bit PCM WAV of a sine tone, header written by hand (RIFF/WAVE, fmt, data). */
export function makeWav(seconds: number, opts: { sampleRate?: number; channels?: number; frequency?: number } = {}): Buffer {
  const sampleRate = opts.sampleRate ?? 16_000;
  const channels = opts.channels ?? 1;
  const frequency = opts.frequency ?? 440;
  const frames = Math.round(seconds * sampleRate);
  const blockAlign = channels * 2;
  const dataBytes = frames * blockAlign;
  const buf = Buffer.alloc(44 + dataBytes);
  buf.write('RIFF', 0, 'latin1');
  buf.writeUInt32LE(36 + dataBytes, 4);
  buf.write('WAVE', 8, 'latin1');
  buf.write('fmt ', 12, 'latin1');
  buf.writeUInt32LE(16, 16); // fmt chunk size
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(channels, 22);
  buf.writeUInt32LE(sampleRate, 24);
  buf.writeUInt32LE(sampleRate * blockAlign, 28); // byte rate
  buf.writeUInt16LE(blockAlign, 32);
  buf.writeUInt16LE(16, 34); // bits per sample
  buf.write('data', 36, 'latin1');
  buf.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < frames; i++) {
    const sample = Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 0.5 * 32767);
    for (let c = 0; c < channels; c++) buf.writeInt16LE(sample, 44 + i * blockAlign + c * 2);
  }
  return buf;
}

export function hasFfmpeg(): boolean {
  try {
    execFileSync('ffmpeg', ['-hide_banner', '-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export type VideoFormat = 'mp4' | 'mov' | 'avi' | 'wmv';

/** Codecs per container: what each is usually written with. */
const VIDEO_CODECS: Record<VideoFormat, { video: string[]; audio: string[] }> = {
  mp4: { video: ['-c:v', 'libx264', '-pix_fmt', 'yuv420p'], audio: ['-c:a', 'aac', '-b:a', '64k'] },
  mov: { video: ['-c:v', 'libx264', '-pix_fmt', 'yuv420p'], audio: ['-c:a', 'aac', '-b:a', '64k'] },
  avi: { video: ['-c:v', 'mpeg4', '-q:v', '3'], audio: ['-c:a', 'libmp3lame', '-b:a', '64k'] },
  wmv: { video: ['-c:v', 'wmv2', '-q:v', '3'], audio: ['-c:a', 'wmav2', '-b:a', '64k'] },
};

/**
 * A video of `seconds` showing `lines` as text on every frame, with a 440 Hz tone unless
 * `audio: false`; 25 frames per second, a keyframe every second. Made by the machine's ffmpeg.
 */
export async function makeVideo(lines: string[], seconds: number, opts: { audio?: boolean; format?: VideoFormat } = {}): Promise<Buffer> {
  const format = opts.format ?? 'mp4';
  const dir = mkdtempSync(path.join(tmpdir(), 'universal-test-video-'));
  try {
    const frame = path.join(dir, 'frame.png');
    // Even dimensions, as yuv420p needs.
    writeFileSync(frame, await sharp(textSvg(lines, { width: 960 })).resize({ width: 960, height: 240, fit: 'contain', background: '#ffffff' }).png().toBuffer());
    const out = path.join(dir, `video.${format}`);
    const audio = opts.audio ?? true;
    execFileSync(
      'ffmpeg',
      [
        '-nostdin', '-v', 'error', '-loop', '1', '-framerate', '25', '-i', frame,
        ...(audio ? ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${seconds}`] : []),
        '-t', String(seconds), ...VIDEO_CODECS[format].video, '-g', '25',
        ...(audio ? VIDEO_CODECS[format].audio : []),
        '-y', out,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type AudioFormat = 'mp3' | 'ogg' | 'm4a' | 'webm';

const AUDIO_CODECS: Record<AudioFormat, string[]> = {
  mp3: ['-c:a', 'libmp3lame', '-b:a', '96k'],
  ogg: ['-c:a', 'libvorbis', '-q:a', '4'],
  m4a: ['-c:a', 'aac', '-b:a', '96k'],
  webm: ['-c:a', 'libopus', '-b:a', '64k'],
};

/** A sine tone of `seconds`, encoded by the machine's ffmpeg. */
export function makeAudio(format: AudioFormat, seconds: number): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'universal-test-audio-'));
  try {
    const out = path.join(dir, `audio.${format}`);
    execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${seconds}`, ...AUDIO_CODECS[format], '-y', out], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A real decompression bomb: a valid 1-bit greyscale PNG of `side` × `side` pixels whose
 * rows are all zero, so a few hundred kilobytes inflate to side² pixels.
 */
export function pngBomb(side: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  const rowBytes = 1 + Math.ceil(side / 8); // filter byte + pixels
  const raw = Buffer.alloc(rowBytes * side); // all zero: filter none, black pixels
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A PNG whose signature is right and whose chunks are garbage. */
export function corruptPng(): Buffer {
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('this is not a PNG chunk at all, just text pretending'.repeat(4))]);
}

/** A white `side` × `side` PNG with a line of text in it: small as a file, large once decoded. */
export async function bigPoster(side: number, lines: string[]): Promise<Buffer> {
  const text = await textImage(lines, 'png');
  return sharp({ create: { width: side, height: side, channels: 3, background: '#ffffff' } })
    .composite([{ input: text, top: Math.floor(side / 2), left: Math.floor(side / 4) }])
    .png()
    .toBuffer();
}
