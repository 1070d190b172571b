/**
 * OCR with tesseract.js and the English model shipped in @tesseract.js-data/eng: the language
 * data is read from that package's folder and the WebAssembly core from tesseract.js-core,
 * with `cacheMethod: 'none'`, so nothing is downloaded or written at run time (checked with
 * the network namespace removed). Used inside the media child process only.
 */
import sharp from 'sharp';
import Tesseract from 'tesseract.js';
import type { OcrSetup } from './media-probe.ts';

export interface Ocr {
  /** Text of an image prepared by `prepareForOcr`, trimmed; '' when none was found. */
  read(prepared: Buffer): Promise<{ text: string; confidence: number }>;
  close(): Promise<void>;
}

/** Tesseract reads text of about 20–40 px best; larger inputs only cost time. */
const MAX_SIDE = 4000;
const SMALL_SIDE = 1000;

export async function createOcr(setup: OcrSetup): Promise<Ocr> {
  const worker = await Tesseract.createWorker('eng', Tesseract.OEM.LSTM_ONLY, {
    langPath: setup.langPath,
    corePath: setup.corePath,
    cacheMethod: 'none',
    gzip: true,
  });
  return {
    async read(prepared) {
      const { data } = await worker.recognize(prepared);
      return { text: tidy(data.text), confidence: Math.round(data.confidence) };
    },
    close: async () => {
      await worker.terminate();
    },
  };
}

/**
 * Upright (EXIF orientation), on white (transparent text would read as black on black),
 * grey, small images enlarged and huge ones reduced: what Tesseract needs to read well.
 */
export async function prepareForOcr(image: string | Buffer, maxPixels: number): Promise<Buffer> {
  const meta = await sharp(image).metadata();
  const side = Math.max(meta.width ?? 0, meta.pageHeight ?? meta.height ?? 0);
  // The first page of a multi-page TIFF, the first frame of an animation.
  let pipeline = sharp(image, { failOn: 'error', limitInputPixels: maxPixels }).rotate();
  if (side > MAX_SIDE) pipeline = pipeline.resize({ width: MAX_SIDE, height: MAX_SIDE, fit: 'inside' });
  else if (side > 0 && side < SMALL_SIDE) pipeline = pipeline.resize({ width: Math.round((meta.width ?? 0) * 2), kernel: 'lanczos3' });
  return pipeline.flatten({ background: '#ffffff' }).grayscale().png({ compressionLevel: 1 }).toBuffer();
}

function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/\s+$/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
