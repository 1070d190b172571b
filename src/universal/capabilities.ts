/**
 * What the universal processor can do on this machine: OCR (an npm package with its English
 * data, always there after `npm install`), ffmpeg/ffprobe (Debian's packages; optional), both
 * probed by providers/media-probe.ts, and the models of the OpenAI-compatible endpoint (optional). Checked
 * once per process; start-up logs the report, and every response carries it in
 * `context.capabilities` so a caller sees why something is missing.
 */
import type { Config } from '../config.ts';
import { probeOcr, probeTool } from '../providers/media-probe.ts';
import type { OcrSetup } from './protocol.ts';

export interface Capability {
  available: boolean;
  /** What it is, or why it is missing and how to get it. */
  detail: string;
}

export interface Capabilities {
  ocr: Capability;
  ffmpeg: Capability;
  ffprobe: Capability;
  vision: Capability;
  transcription: Capability;
  chat: Capability;
}

/** Executables to use; `null` = treat as not installed. Default: `ffmpeg` / `ffprobe` from PATH. */
export interface ToolOptions {
  ffmpeg?: string | null;
  ffprobe?: string | null;
}

export interface Environment {
  capabilities: Capabilities;
  /** Resolved executables, null when missing. */
  tools: { ffmpeg: string | null; ffprobe: string | null };
  ocr: OcrSetup | null;
}

const INSTALL_HINT = 'install it (Debian/Ubuntu: apt-get install ffmpeg, which brings ffprobe too) and restart';

async function tool(name: 'ffmpeg' | 'ffprobe', configured: string | null | undefined, uses: string): Promise<{ path: string | null; capability: Capability }> {
  if (configured === null) return { path: null, capability: { available: false, detail: `${name} is disabled on this server: ${uses} are not available.` } };
  const executable = configured ?? name;
  const probe = await probeTool(executable);
  if (probe.ok) return { path: executable, capability: { available: true, detail: probe.version } };
  return {
    path: null,
    capability: { available: false, detail: `${name} ${probe.reason === 'not found' ? `was not found on PATH` : probe.reason}: ${uses} are not available; ${INSTALL_HINT}.` },
  };
}

/** Everything the service needs to know about the machine and the configuration. */
export async function probeEnvironment(config: Pick<Config, 'openai' | 'models'>, tools: ToolOptions = {}): Promise<Environment> {
  const [ffmpeg, ffprobe] = await Promise.all([
    tool('ffmpeg', tools.ffmpeg, 'video keyframe text and the audio track of videos'),
    tool('ffprobe', tools.ffprobe, 'video metadata (duration, resolution, codecs)'),
  ]);
  const { setup: ocr, detail: ocrDetail } = probeOcr();
  const endpoint = config.openai !== null;
  const vision = config.models.vision;
  const transcription = config.models.transcription;
  const capabilities: Capabilities = {
    ocr: { available: ocr !== null, detail: ocrDetail },
    ffmpeg: ffmpeg.capability,
    ffprobe: ffprobe.capability,
    vision:
      endpoint && vision
        ? { available: true, detail: `vision model ${vision}` }
        : { available: false, detail: vision ? 'VISION_MODEL is set but no model endpoint is (OPENAI_BASE_URL or OPENAI_API_KEY).' : 'No vision model is configured (VISION_MODEL): images get OCR text and metadata only.' },
    transcription:
      endpoint && transcription
        ? { available: true, detail: `speech model ${transcription}` }
        : {
            available: false,
            detail: transcription
              ? 'TRANSCRIPTION_MODEL is set but no model endpoint is (OPENAI_BASE_URL or OPENAI_API_KEY).'
              : 'No speech model is configured (TRANSCRIPTION_MODEL): audio gets metadata only, never a transcript.',
          },
    chat: endpoint
      ? { available: true, detail: 'chat model of the agent, on the configured endpoint' }
      : { available: false, detail: 'No model endpoint is configured (OPENAI_BASE_URL or OPENAI_API_KEY): answers are the extracted content itself.' },
  };
  return { capabilities, tools: { ffmpeg: ffmpeg.path, ffprobe: ffprobe.path }, ocr };
}

/** One log line's fields: `{ ocr: 'yes', ffmpeg: 'no: ffmpeg was not found on PATH…', … }`. */
export function capabilitySummary(capabilities: Capabilities): Record<string, string> {
  return Object.fromEntries(Object.entries(capabilities).map(([name, c]) => [name, c.available ? `yes (${c.detail})` : `no: ${c.detail}`]));
}
