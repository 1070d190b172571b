/** Messages between the service and its media child process (see media.ts). */
import type { OcrSetup } from '../providers/media-probe.ts';
import type { FileType } from './formats.ts';

export type { OcrSetup };

export interface MediaJob {
  kind: 'image' | 'audio' | 'video';
  /** The uploaded file, written to a private temporary folder. */
  path: string;
  type: FileType;
  /** Where the child may write what it produces (video frames, the audio track). */
  workDir: string;
  tools: { ffmpeg: string | null; ffprobe: string | null };
  ocr: OcrSetup | null;
  /** Largest image accepted, in pixels (width × height), before anything is decoded. */
  maxPixels: number;
  /** Hand back an image a vision model accepts (PNG, JPEG, WebP or GIF of at most 2048 px). */
  wantVisionImage: boolean;
  /** Extract the audio track of a video to a file (for transcription). */
  wantAudioTrack: boolean;
  /** The child's own deadline, a little after the parent's: a second guard if the parent is stuck. */
  deadlineMs: number;
}

export interface KeyframeText {
  timeSeconds: number;
  text: string;
}

export interface MediaResult {
  metadata: Record<string, unknown>;
  durationSeconds?: number;
  /** OCR text of an image. */
  ocrText?: string;
  /** OCR text per keyframe of a video (frames without text left out). */
  keyframes?: KeyframeText[];
  /** Keyframes looked at, with or without text. */
  keyframesRead?: number;
  /** PNG/JPEG/WebP/GIF bytes for a vision model. */
  visionImage?: { mimeType: string; data: Uint8Array };
  /** The extracted audio track of a video, in workDir. */
  audioTrack?: { path: string; fileName: string; mimeType: string };
  hasAudio?: boolean;
  /** What could not be done and why, in words for the user. */
  notes: string[];
}

export type MediaErrorCode = 'CORRUPT' | 'TOO_LARGE' | 'TIMEOUT';

export type MediaReply = { ok: true; result: MediaResult } | { ok: false; code?: MediaErrorCode; message: string; detail?: string };
