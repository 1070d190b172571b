/**
 * What this machine has for the universal processor: the OCR engine and its English data (npm
 * packages, always there after `npm install`) and the ffmpeg/ffprobe executables (optional).
 * Each check runs once per process.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** Why OCR is missing, in the words a result's notes use. */
export const OCR_MISSING = 'tesseract.js data missing';

/** Where the OCR engine finds its English data and its WebAssembly core. */
export interface OcrSetup {
  /** Folder holding eng.traineddata.gz (the English OCR data package). */
  langPath: string;
  corePath: string;
}

export interface OcrProbe {
  setup: OcrSetup | null;
  /** What it is, or why it is missing and how to get it. */
  detail: string;
}

/** The LSTM-only "best_int" English model: 3 MB, and what tesseract.js itself picks for LSTM. */
export function probeOcr(): OcrProbe {
  let setup: OcrSetup | null = null;
  try {
    const data = path.dirname(require.resolve('@tesseract.js-data/eng/package.json'));
    const core = path.dirname(require.resolve('tesseract.js-core/package.json'));
    require.resolve('tesseract.js');
    const langPath = path.join(data, '4.0.0_best_int');
    if (existsSync(path.join(langPath, 'eng.traineddata.gz'))) setup = { langPath, corePath: core };
  } catch {
    // A package is missing: reported below.
  }
  return setup
    ? { setup, detail: 'tesseract.js with the English data of @tesseract.js-data/eng (offline)' }
    : { setup: null, detail: 'tesseract.js or @tesseract.js-data/eng is not installed: run npm install.' };
}

export type ToolProbe = { ok: true; version: string } | { ok: false; reason: string };

const toolProbes = new Map<string, Promise<ToolProbe>>();

/** Runs `<tool> -version` once per process and executable: its first line, or why it does not run. */
export function probeTool(executable: string): Promise<ToolProbe> {
  let probe = toolProbes.get(executable);
  if (!probe) {
    probe = new Promise((resolve) => {
      execFile(executable, ['-hide_banner', '-version'], { timeout: 10_000, maxBuffer: 1024 * 1024 }, (error, stdout) => {
        if (error) {
          const code = (error as NodeJS.ErrnoException).code;
          resolve({ ok: false, reason: code === 'ENOENT' ? 'not found' : `does not run (${error.message.split('\n', 1)[0]})` });
        } else {
          resolve({ ok: true, version: stdout.split('\n', 1)[0]!.trim() });
        }
      });
    });
    toolProbes.set(executable, probe);
  }
  return probe;
}
