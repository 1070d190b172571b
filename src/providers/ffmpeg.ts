/**
 * ffprobe and ffmpeg (Debian's, when installed) for video and audio: metadata, keyframes, the
 * audio track. Used inside the media child process only. Each run has a deadline and, where
 * the shell allows, an address-space limit, so a hostile file cannot make them run away.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export class ToolError extends Error {
  constructor(
    message: string,
    readonly kind: 'failed' | 'timeout',
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/** Address space of one ffmpeg/ffprobe run (ulimit -v). Decoding a 4K frame needs far less. */
const TOOL_MEMORY_KB = 1536 * 1024;
const MAX_OUTPUT = 16 * 1024 * 1024;
const SH = '/bin/sh';

export async function runTool(executable: string, args: string[], timeoutMs: number): Promise<string> {
  // `sh -c 'ulimit -v N; exec "$@"' N tool args…`: the limit applies to the tool alone.
  const viaShell = existsSync(SH);
  const command = viaShell ? SH : executable;
  const argv = viaShell ? ['-c', 'ulimit -v "$0" 2>/dev/null; exec "$@"', String(TOOL_MEMORY_KB), executable, ...args] : args;
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, Math.max(1, timeoutMs));
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_OUTPUT) child.kill('SIGKILL');
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString('utf8')).slice(-4000);
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new ToolError(`${executable} could not be started: ${error.message}`, 'failed', err));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) return reject(new ToolError(`${executable} took too long`, 'timeout', err));
      if (code !== 0) return reject(new ToolError(`${executable} exited with ${code ?? signal}: ${err.trim().split('\n').pop() ?? ''}`, 'failed', err));
      resolve(Buffer.concat(out).toString('utf8'));
    });
  });
}

/**
 * A file to read, with the demuxer its extension and magic bytes promised. Forcing the demuxer
 * (rather than letting ffmpeg guess from the content) and allowing only the `file` protocol
 * keep a crafted file from being read as a playlist or a concat list that points ffmpeg at
 * other files or at the network.
 */
export interface MediaInput {
  path: string;
  demuxer: string;
}

const guarded = (input: MediaInput) => ['-protocol_whitelist', 'file', '-f', input.demuxer];

export interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  codec_long_name?: string;
  profile?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  bit_rate?: string;
  duration?: string;
  tags?: Record<string, string>;
}

export interface Probe {
  streams: ProbeStream[];
  format: { format_name?: string; format_long_name?: string; duration?: string; start_time?: string; bit_rate?: string; size?: string; tags?: Record<string, string> };
}

export async function ffprobe(executable: string, input: MediaInput, timeoutMs: number): Promise<Probe> {
  const json = await runTool(executable, ['-v', 'error', ...guarded(input), '-print_format', 'json', '-show_format', '-show_streams', input.path], timeoutMs);
  const parsed = JSON.parse(json) as Partial<Probe>;
  return { streams: parsed.streams ?? [], format: parsed.format ?? {} };
}

/** Presentation times (seconds from the file's start) of the first video stream's keyframes, read from packets without decoding. */
export async function keyframeTimes(executable: string, input: MediaInput, startTime: number, timeoutMs: number): Promise<number[]> {
  const csv = await runTool(executable, ['-v', 'error', ...guarded(input), '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', input.path], timeoutMs);
  const times: number[] = [];
  for (const line of csv.split('\n')) {
    const [pts, flags] = line.trim().split(',');
    const t = Number(pts);
    if (flags?.includes('K') && Number.isFinite(t)) times.push(Math.max(0, t - startTime));
  }
  return [...new Set(times)].sort((a, b) => a - b);
}

/**
 * Writes every `step`-th keyframe (at most `count`) as PNG files `prefix01.png`, … in `dir`,
 * decoding keyframes only, scaled to at most 1920 px wide.
 */
export async function extractKeyframes(executable: string, input: MediaInput, dir: string, step: number, count: number, timeoutMs: number): Promise<string[]> {
  await runTool(
    executable,
    [
      '-nostdin', '-v', 'error', '-skip_frame', 'nokey', ...guarded(input), '-i', input.path, '-map', '0:v:0',
      '-vf', `select='not(mod(n\\,${step}))',scale='min(1920,iw)':-2`,
      '-vsync', 'vfr', '-frames:v', String(count), '-f', 'image2', '-y', `${dir}/keyframe%02d.png`,
    ],
    timeoutMs,
  );
  const files: string[] = [];
  for (let i = 1; i <= count; i++) {
    const path = `${dir}/keyframe${String(i).padStart(2, '0')}.png`;
    if (existsSync(path)) files.push(path);
  }
  return files;
}

/** The first audio track as 16 kHz mono MP3 (small, and what speech models take); WAV when there is no MP3 encoder. */
export async function extractAudioTrack(executable: string, input: MediaInput, dir: string, timeoutMs: number): Promise<{ path: string; fileName: string; mimeType: string }> {
  const base = ['-nostdin', '-v', 'error', ...guarded(input), '-i', input.path, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', '16000'];
  try {
    await runTool(executable, [...base, '-c:a', 'libmp3lame', '-b:a', '48k', '-y', `${dir}/audio.mp3`], timeoutMs);
    return { path: `${dir}/audio.mp3`, fileName: 'audio.mp3', mimeType: 'audio/mpeg' };
  } catch (error) {
    if (error instanceof ToolError && error.kind === 'timeout') throw error;
    await runTool(executable, [...base, '-c:a', 'pcm_s16le', '-y', `${dir}/audio.wav`], timeoutMs);
    return { path: `${dir}/audio.wav`, fileName: 'audio.wav', mimeType: 'audio/wav' };
  }
}
