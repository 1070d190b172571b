/**
 * What the universal processor accepts, and the checks that need no parser: the extension
 * list, strict base64, and magic bytes that must agree with the extension (both from
 * src/files/file-types.ts). Pure functions, so every refusal is immediate and costs nothing.
 */

import { typeOfExtension, type FileKind, type FileTypeInfo } from '../files/file-types.ts';

export type { FileKind };

/** A file type of the shared table; every one this processor takes has magic bytes to check. */
type Format = FileTypeInfo & { sniff: (data: Buffer) => boolean };

/** By kind, in the order of interface.md endpoint 8. */
export const SUPPORTED_TYPES = Object.freeze({
  image: ['jpg', 'jpeg', 'png', 'webp', 'gif', 'tiff'],
  audio: ['mp3', 'wav', 'm4a', 'ogg', 'webm'],
  video: ['mp4', 'avi', 'mov', 'wmv'],
  document: ['pdf', 'doc', 'docx', 'txt'],
} as const) satisfies Readonly<Record<FileKind, readonly string[]>>;

export type FileType = (typeof SUPPORTED_TYPES)[FileKind][number];

/** This processor's view of the file types (src/files/file-types.ts): the extensions it takes. */
const FORMATS: Readonly<Record<FileType, Format>> = Object.freeze(
  Object.fromEntries(
    Object.values(SUPPORTED_TYPES)
      .flat()
      .map((ext) => [ext, typeOfExtension(ext) as Format]),
  ) as Record<FileType, Format>,
);

export const SUPPORTED_LIST = `images ${SUPPORTED_TYPES.image.join(', ')}; audio ${SUPPORTED_TYPES.audio.join(', ')}; video ${SUPPORTED_TYPES.video.join(', ')}; documents ${SUPPORTED_TYPES.document.join(', ')}`;

export function formatOf(type: FileType): Format {
  return FORMATS[type];
}

const isFileType = (ext: string): ext is FileType => Object.hasOwn(FORMATS, ext);

/** "PNG", ".png", " Png " -> "png"; another spelling of a listed type ("tif") -> its listed one; null when not in the lists. */
export function normalizeFileType(raw: string): FileType | null {
  const ext = raw.trim().replace(/^\./, '').toLowerCase();
  if (isFileType(ext)) return ext;
  return typeOfExtension(ext)?.extensions.find(isFileType) ?? null;
}

/** The extension whose magic bytes these are, for a helpful refusal ("this looks like a PNG image"). */
export function sniffType(data: Buffer): FileType | null {
  // Text last: it is the loosest test.
  const order: FileType[] = ['png', 'jpg', 'gif', 'webp', 'tiff', 'wav', 'avi', 'ogg', 'webm', 'wmv', 'mp4', 'pdf', 'doc', 'docx', 'mp3', 'txt'];
  return order.find((type) => FORMATS[type].sniff(data)) ?? null;
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
