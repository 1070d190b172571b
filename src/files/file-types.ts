/**
 * Every file type the service knows, once: its extensions, its MIME type and the other names
 * clients send for it, its magic bytes and its name for people. Two views are built on it:
 * the datasource one (MIME types, src/ingestion/loaders/mime.ts) and the universal processor's
 * (extensions, src/universal/formats.ts). Pure data and pure functions.
 */
import { mimeEssence } from '../providers/storage.ts';

export type FileKind = 'image' | 'audio' | 'video' | 'document';

// ---- magic bytes ----

const startsWith = (data: Buffer, bytes: number[] | string, at = 0) => {
  const b = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes);
  return data.length >= at + b.length && data.subarray(at, at + b.length).equals(b);
};
const isRiff = (d: Buffer, form: string) => (startsWith(d, 'RIFF') || startsWith(d, 'RF64')) && startsWith(d, form, 8);
/**
 * ISO base media (MP4, M4A, MOV): a `ftyp` box first. Older QuickTime files may start with
 * another top-level atom instead, so those are accepted for every ISO extension: the brand
 * does not reliably tell MP4 from M4A or MOV (phones write `isom` into all three).
 */
const ISO_FIRST_ATOMS = ['ftyp', 'moov', 'mdat', 'wide', 'free', 'skip', 'pnot'];
/** pdf.js, like Acrobat, accepts junk before the header within the first kilobyte. */
const PDF_HEADER_WINDOW = 1024;

/** True when the bytes start the way files of that format do. */
export const magic = {
  jpeg: (d: Buffer) => startsWith(d, [0xff, 0xd8, 0xff]),
  png: (d: Buffer) => startsWith(d, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  gif: (d: Buffer) => startsWith(d, 'GIF87a') || startsWith(d, 'GIF89a'),
  webp: (d: Buffer) => isRiff(d, 'WEBP'),
  // Classic TIFF (42) and BigTIFF (43), both byte orders.
  tiff: (d: Buffer) =>
    startsWith(d, [0x49, 0x49, 0x2a, 0x00]) || startsWith(d, [0x4d, 0x4d, 0x00, 0x2a]) || startsWith(d, [0x49, 0x49, 0x2b, 0x00]) || startsWith(d, [0x4d, 0x4d, 0x00, 0x2b]),
  // An ID3v2 tag, or an MPEG audio frame header (11 sync bits, a valid layer).
  mp3: (d: Buffer) => startsWith(d, 'ID3') || (d.length >= 2 && d[0] === 0xff && (d[1]! & 0xe0) === 0xe0 && (d[1]! & 0x06) !== 0),
  wav: (d: Buffer) => isRiff(d, 'WAVE'),
  ogg: (d: Buffer) => startsWith(d, 'OggS'),
  // Matroska/WebM: the EBML header.
  ebml: (d: Buffer) => startsWith(d, [0x1a, 0x45, 0xdf, 0xa3]),
  avi: (d: Buffer) => isRiff(d, 'AVI '),
  // ASF header object GUID (WMV, WMA).
  asf: (d: Buffer) => startsWith(d, [0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa, 0x00, 0x62, 0xce, 0x6c]),
  isoMedia: (d: Buffer) => ISO_FIRST_ATOMS.some((atom) => startsWith(d, atom, 4)),
  pdf: (d: Buffer) => d.subarray(0, PDF_HEADER_WINDOW).includes(Buffer.from('%PDF-')),
  /** OLE compound file: .doc, .xls, .ppt of old. */
  ole: (d: Buffer) => startsWith(d, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
  /** A ZIP local file header: every OOXML file (docx, pptx, xlsx). */
  zip: (d: Buffer) => startsWith(d, [0x50, 0x4b, 0x03, 0x04]),
  gzip: (d: Buffer) => startsWith(d, [0x1f, 0x8b]),
  utf8Text: (d: Buffer) => {
    if (d.includes(0)) return false;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(d);
      return true;
    } catch {
      return false;
    }
  },
} as const;

// ---- the types ----

export interface FileTypeInfo {
  /** Extensions, the usual one first, lower case, without the dot. */
  extensions: readonly string[];
  mimeType: string;
  /** Other MIME names that clients (browsers, curl, OS type databases) send for it. */
  aliases?: readonly string[];
  /** For people, in messages: "PNG image". */
  label: string;
  kind: FileKind;
  /** True when the bytes look like this type; absent where any bytes may be. */
  sniff?: (data: Buffer) => boolean;
  /** ffmpeg's demuxer for audio and video (forced: ffmpeg must not guess from the content). */
  demuxer?: string;
}

const OOXML = 'application/vnd.openxmlformats-officedocument';

export const FILE_TYPES: readonly FileTypeInfo[] = Object.freeze([
  { extensions: ['jpg', 'jpeg'], mimeType: 'image/jpeg', label: 'JPEG image', kind: 'image', sniff: magic.jpeg },
  { extensions: ['png'], mimeType: 'image/png', label: 'PNG image', kind: 'image', sniff: magic.png },
  { extensions: ['webp'], mimeType: 'image/webp', label: 'WebP image', kind: 'image', sniff: magic.webp },
  { extensions: ['gif'], mimeType: 'image/gif', label: 'GIF image', kind: 'image', sniff: magic.gif },
  { extensions: ['tiff', 'tif'], mimeType: 'image/tiff', label: 'TIFF image', kind: 'image', sniff: magic.tiff },
  { extensions: ['mp3'], mimeType: 'audio/mpeg', label: 'MP3 audio', kind: 'audio', sniff: magic.mp3, demuxer: 'mp3' },
  { extensions: ['wav'], mimeType: 'audio/wav', label: 'WAV audio', kind: 'audio', sniff: magic.wav, demuxer: 'wav' },
  { extensions: ['m4a'], mimeType: 'audio/mp4', label: 'M4A audio', kind: 'audio', sniff: magic.isoMedia, demuxer: 'mov' },
  { extensions: ['ogg'], mimeType: 'audio/ogg', label: 'Ogg audio', kind: 'audio', sniff: magic.ogg, demuxer: 'ogg' },
  { extensions: ['webm'], mimeType: 'audio/webm', label: 'WebM audio', kind: 'audio', sniff: magic.ebml, demuxer: 'matroska' },
  { extensions: ['mp4'], mimeType: 'video/mp4', label: 'MP4 video', kind: 'video', sniff: magic.isoMedia, demuxer: 'mov' },
  { extensions: ['avi'], mimeType: 'video/x-msvideo', label: 'AVI video', kind: 'video', sniff: magic.avi, demuxer: 'avi' },
  { extensions: ['mov'], mimeType: 'video/quicktime', label: 'QuickTime video', kind: 'video', sniff: magic.isoMedia, demuxer: 'mov' },
  { extensions: ['wmv'], mimeType: 'video/x-ms-wmv', label: 'WMV video', kind: 'video', sniff: magic.asf, demuxer: 'asf' },
  { extensions: ['pdf'], mimeType: 'application/pdf', aliases: ['application/x-pdf'], label: 'PDF document', kind: 'document', sniff: magic.pdf },
  // A .docx saved under .doc is common and the .doc reader handles it (behind the ZIP guard).
  { extensions: ['doc'], mimeType: 'application/msword', label: 'Word document (.doc)', kind: 'document', sniff: (d) => magic.ole(d) || magic.zip(d) },
  { extensions: ['docx'], mimeType: `${OOXML}.wordprocessingml.document`, label: 'Word document', kind: 'document', sniff: magic.zip },
  { extensions: ['pptx'], mimeType: `${OOXML}.presentationml.presentation`, label: 'PowerPoint presentation', kind: 'document', sniff: magic.zip },
  { extensions: ['xlsx'], mimeType: `${OOXML}.spreadsheetml.sheet`, label: 'Excel workbook', kind: 'document', sniff: magic.zip },
  { extensions: ['txt'], mimeType: 'text/plain', label: 'text file', kind: 'document', sniff: magic.utf8Text },
  { extensions: ['md', 'markdown'], mimeType: 'text/markdown', aliases: ['text/x-markdown', 'text/md', 'text/x-md'], label: 'Markdown file', kind: 'document' },
  {
    extensions: ['csv'],
    mimeType: 'text/csv',
    aliases: ['application/csv', 'text/x-csv', 'application/x-csv', 'text/comma-separated-values'],
    label: 'CSV file',
    kind: 'document',
  },
  { extensions: ['json'], mimeType: 'application/json', aliases: ['text/json', 'application/x-json'], label: 'JSON file', kind: 'document' },
]);

const BY_EXTENSION: ReadonlyMap<string, FileTypeInfo> = new Map(FILE_TYPES.flatMap((t) => t.extensions.map((ext) => [ext, t] as const)));
const BY_MIME: ReadonlyMap<string, FileTypeInfo> = new Map(FILE_TYPES.flatMap((t) => [t.mimeType, ...(t.aliases ?? [])].map((m) => [m, t] as const)));

/** By extension ("PNG", ".png", " png "), or undefined. */
export function typeOfExtension(raw: string): FileTypeInfo | undefined {
  return BY_EXTENSION.get(raw.trim().replace(/^\./, '').toLowerCase());
}

/** By MIME type or one of its aliases, parameters and case ignored, or undefined. */
export function typeOfMime(raw: string): FileTypeInfo | undefined {
  return BY_MIME.get(mimeEssence(raw));
}

/** The extension of the last path segment of a file name ("a/b.Docx" -> "docx"), or null. */
export function extensionOf(fileName: string): string | null {
  // Browsers and some clients send a full path; only the last segment's extension counts.
  const base = fileName.trim().split(/[/\\]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot < 0 ? null : base.slice(dot + 1).toLowerCase();
}

