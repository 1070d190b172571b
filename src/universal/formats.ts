/**
 * What the universal processor accepts, and the checks that need no parser: the extension
 * list, strict base64, and magic bytes that must agree with the extension. Pure functions,
 * so every refusal is immediate and costs nothing.
 */

export type FileKind = 'image' | 'audio' | 'video' | 'document';

interface Format {
  kind: FileKind;
  mimeType: string;
  /** Human name used in messages ("PNG image"). */
  label: string;
  /** True when the bytes look like this format. */
  sniff: (data: Buffer) => boolean;
  /** ffmpeg's demuxer for audio and video (forced: ffmpeg must not guess from the content). */
  demuxer?: string;
}

const startsWith = (data: Buffer, bytes: number[] | string, at = 0) => {
  const b = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes);
  return data.length >= at + b.length && data.subarray(at, at + b.length).equals(b);
};

const isJpeg = (d: Buffer) => startsWith(d, [0xff, 0xd8, 0xff]);
const isPng = (d: Buffer) => startsWith(d, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const isGif = (d: Buffer) => startsWith(d, 'GIF87a') || startsWith(d, 'GIF89a');
const isRiff = (d: Buffer, form: string) => (startsWith(d, 'RIFF') || startsWith(d, 'RF64')) && startsWith(d, form, 8);
const isWebp = (d: Buffer) => isRiff(d, 'WEBP');
// Classic TIFF (42) and BigTIFF (43), both byte orders.
const isTiff = (d: Buffer) => startsWith(d, [0x49, 0x49, 0x2a, 0x00]) || startsWith(d, [0x4d, 0x4d, 0x00, 0x2a]) || startsWith(d, [0x49, 0x49, 0x2b, 0x00]) || startsWith(d, [0x4d, 0x4d, 0x00, 0x2b]);
// An ID3v2 tag, or an MPEG audio frame header (11 sync bits, a valid layer).
const isMp3 = (d: Buffer) => startsWith(d, 'ID3') || (d.length >= 2 && d[0] === 0xff && (d[1]! & 0xe0) === 0xe0 && (d[1]! & 0x06) !== 0);
const isWav = (d: Buffer) => isRiff(d, 'WAVE');
const isOgg = (d: Buffer) => startsWith(d, 'OggS');
// Matroska/WebM: the EBML header.
const isEbml = (d: Buffer) => startsWith(d, [0x1a, 0x45, 0xdf, 0xa3]);
const isAvi = (d: Buffer) => isRiff(d, 'AVI ');
// ASF header object GUID (WMV, WMA).
const isAsf = (d: Buffer) => startsWith(d, [0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa, 0x00, 0x62, 0xce, 0x6c]);
/**
 * ISO base media (MP4, M4A, MOV): a `ftyp` box first. Older QuickTime files may start with
 * another top-level atom instead, so those are accepted for every ISO extension: the brand
 * does not reliably tell MP4 from M4A or MOV (phones write `isom` into all three).
 */
const ISO_FIRST_ATOMS = ['ftyp', 'moov', 'mdat', 'wide', 'free', 'skip', 'pnot'];
const isIsoMedia = (d: Buffer) => ISO_FIRST_ATOMS.some((atom) => startsWith(d, atom, 4));
// pdf.js, like Acrobat, accepts junk before the header within the first kilobyte.
const isPdf = (d: Buffer) => d.subarray(0, 1024).includes(Buffer.from('%PDF-'));
const isOle = (d: Buffer) => startsWith(d, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const isZip = (d: Buffer) => startsWith(d, [0x50, 0x4b, 0x03, 0x04]);

const FORMATS = {
  jpg: { kind: 'image', mimeType: 'image/jpeg', label: 'JPEG image', sniff: isJpeg },
  jpeg: { kind: 'image', mimeType: 'image/jpeg', label: 'JPEG image', sniff: isJpeg },
  png: { kind: 'image', mimeType: 'image/png', label: 'PNG image', sniff: isPng },
  webp: { kind: 'image', mimeType: 'image/webp', label: 'WebP image', sniff: isWebp },
  gif: { kind: 'image', mimeType: 'image/gif', label: 'GIF image', sniff: isGif },
  tiff: { kind: 'image', mimeType: 'image/tiff', label: 'TIFF image', sniff: isTiff },
  mp3: { kind: 'audio', mimeType: 'audio/mpeg', label: 'MP3 audio', sniff: isMp3, demuxer: 'mp3' },
  wav: { kind: 'audio', mimeType: 'audio/wav', label: 'WAV audio', sniff: isWav, demuxer: 'wav' },
  m4a: { kind: 'audio', mimeType: 'audio/mp4', label: 'M4A audio', sniff: isIsoMedia, demuxer: 'mov' },
  ogg: { kind: 'audio', mimeType: 'audio/ogg', label: 'Ogg audio', sniff: isOgg, demuxer: 'ogg' },
  webm: { kind: 'audio', mimeType: 'audio/webm', label: 'WebM audio', sniff: isEbml, demuxer: 'matroska' },
  mp4: { kind: 'video', mimeType: 'video/mp4', label: 'MP4 video', sniff: isIsoMedia, demuxer: 'mov' },
  avi: { kind: 'video', mimeType: 'video/x-msvideo', label: 'AVI video', sniff: isAvi, demuxer: 'avi' },
  mov: { kind: 'video', mimeType: 'video/quicktime', label: 'QuickTime video', sniff: isIsoMedia, demuxer: 'mov' },
  wmv: { kind: 'video', mimeType: 'video/x-ms-wmv', label: 'WMV video', sniff: isAsf, demuxer: 'asf' },
  pdf: { kind: 'document', mimeType: 'application/pdf', label: 'PDF document', sniff: isPdf },
  // A .docx saved under .doc is common and the .doc reader handles it (behind the ZIP guard).
  doc: { kind: 'document', mimeType: 'application/msword', label: 'Word document (.doc)', sniff: (d) => isOle(d) || isZip(d) },
  docx: { kind: 'document', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', label: 'Word document', sniff: isZip },
  txt: { kind: 'document', mimeType: 'text/plain', label: 'text file', sniff: isUtf8Text },
} as const satisfies Record<string, Format>;

export type FileType = keyof typeof FORMATS;

/** By kind, in the order of interface.md endpoint 8. */
export const SUPPORTED_TYPES: Readonly<Record<FileKind, readonly FileType[]>> = Object.freeze({
  image: ['jpg', 'jpeg', 'png', 'webp', 'gif', 'tiff'],
  audio: ['mp3', 'wav', 'm4a', 'ogg', 'webm'],
  video: ['mp4', 'avi', 'mov', 'wmv'],
  document: ['pdf', 'doc', 'docx', 'txt'],
});

export const SUPPORTED_LIST = `images ${SUPPORTED_TYPES.image.join(', ')}; audio ${SUPPORTED_TYPES.audio.join(', ')}; video ${SUPPORTED_TYPES.video.join(', ')}; documents ${SUPPORTED_TYPES.document.join(', ')}`;

export function formatOf(type: FileType): Format {
  return FORMATS[type];
}

/** "PNG", ".png", " Png " -> "png"; null when not in the lists. */
export function normalizeFileType(raw: string): FileType | null {
  const ext = raw.trim().replace(/^\./, '').toLowerCase();
  // `tif` is the same format under its other common spelling.
  const canonical = ext === 'tif' ? 'tiff' : ext;
  return Object.hasOwn(FORMATS, canonical) ? (canonical as FileType) : null;
}

/** The extension whose magic bytes these are, for a helpful refusal ("this looks like a PNG image"). */
export function sniffType(data: Buffer): FileType | null {
  // Text last: it is the loosest test.
  const order: FileType[] = ['png', 'jpg', 'gif', 'webp', 'tiff', 'wav', 'avi', 'ogg', 'webm', 'wmv', 'mp4', 'pdf', 'doc', 'docx', 'mp3', 'txt'];
  return order.find((type) => FORMATS[type].sniff(data)) ?? null;
}

function isUtf8Text(data: Buffer): boolean {
  if (data.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}

const BASE64 = /^[A-Za-z0-9+/]*$/;
const DATA_URL_PREFIX = /^data:[\w.+-]+\/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,/i;

export type Base64Check = { ok: true; text: string; decodedBytes: number } | { ok: false; reason: string };

/**
 * Checks that `input` is standard base64 (RFC 4648 alphabet; padding optional but, when
 * present, correct) and tells the decoded size without decoding. Whitespace (line breaks of
 * MIME-style base64) and a `data:…;base64,` prefix are accepted; anything else is refused,
 * because Node's decoder silently skips invalid characters and would turn garbage into bytes.
 */
export function checkBase64(input: string): Base64Check {
  const text = input.replace(DATA_URL_PREFIX, '').replace(/[\t\n\r ]+/g, '');
  if (text.length === 0) return { ok: false, reason: 'fileBuffer is empty.' };
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const body = text.slice(0, text.length - padding);
  if (!BASE64.test(body)) {
    return { ok: false, reason: 'fileBuffer is not base64: it contains characters outside A–Z, a–z, 0–9, + and /.' };
  }
  if ((padding > 0 && text.length % 4 !== 0) || body.length % 4 === 1) {
    return { ok: false, reason: 'fileBuffer is not base64: its length is not that of any base64 text.' };
  }
  return { ok: true, text, decodedBytes: Math.floor((body.length * 3) / 4) };
}
