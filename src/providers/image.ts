/**
 * Images through sharp (libvips): header metadata, and a re-encoded copy for a vision model.
 * Used inside the media child process only (native code: a crash ends that process).
 */
import sharp, { type Metadata } from 'sharp';

export type ImageMetadata = Metadata;

/** One image at a time and no cache: the media process handles one job and exits. */
export function useOneImageAtATime(): void {
  sharp.cache(false);
  sharp.concurrency(1);
}

/** Headers only: a decompression bomb is measured here before any pixel is decoded. */
export function imageMetadata(path: string): Promise<ImageMetadata> {
  return sharp(path, { limitInputPixels: false }).metadata();
}

/** Upright, at most `maxSide` pixels a side: PNG when it has transparency, else JPEG. */
export async function resizedImage(path: string, opts: { maxPixels: number; maxSide: number; hasAlpha: boolean }): Promise<{ mimeType: string; data: Buffer }> {
  const pipeline = sharp(path, { limitInputPixels: opts.maxPixels }).rotate().resize({ width: opts.maxSide, height: opts.maxSide, fit: 'inside', withoutEnlargement: true });
  if (opts.hasAlpha) return { mimeType: 'image/png', data: await pipeline.png().toBuffer() };
  return { mimeType: 'image/jpeg', data: await pipeline.jpeg({ quality: 90 }).toBuffer() };
}
