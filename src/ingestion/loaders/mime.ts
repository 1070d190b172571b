/**
 * The datasources' view of the file types (src/files/file-types.ts): the MIME types a
 * datasource may have, what a file name or a declared type means, and the labels and magic
 * bytes the loaders check.
 */
import { extensionOf, magic, typeOfExtension, typeOfMime } from '../../files/file-types.ts';
import { mimeEssence } from '../../providers/storage.ts';

const mimeOf = (ext: string) => typeOfExtension(ext)!.mimeType;

export const MIME = Object.freeze({
  csv: mimeOf('csv'),
  text: mimeOf('txt'),
  markdown: mimeOf('md'),
  pdf: mimeOf('pdf'),
  json: mimeOf('json'),
  pptx: mimeOf('pptx'),
  docx: mimeOf('docx'),
  xlsx: mimeOf('xlsx'),
  doc: mimeOf('doc'),
});

export const DATASOURCE_MIME_TYPES: readonly string[] = Object.freeze([
  MIME.csv,
  MIME.text,
  MIME.markdown,
  MIME.pdf,
  MIME.json,
  MIME.pptx,
  MIME.docx,
  MIME.xlsx,
]);

/** Readable by `loadDocument` but not offered for datasources (another feature reads .doc). */
export const EXTRA_MIME_TYPES: readonly string[] = Object.freeze([MIME.doc]);

const SUPPORTED: ReadonlySet<string> = new Set([...DATASOURCE_MIME_TYPES, ...EXTRA_MIME_TYPES]);

export function isSupportedMimeType(type: string): boolean {
  return SUPPORTED.has(type);
}

/** The three OOXML formats are ZIP containers and go through the ZIP guard before parsing. */
export function isOoxml(type: string): boolean {
  return type === MIME.docx || type === MIME.pptx || type === MIME.xlsx;
}

/** The MIME type a file name's extension stands for, when the loaders read it; else null. */
export function mimeTypeFromFileName(fileName: string): string | null {
  const ext = extensionOf(fileName);
  const type = ext ? typeOfExtension(ext) : undefined;
  return type && SUPPORTED.has(type.mimeType) ? type.mimeType : null;
}

/** The usual name of a MIME type, for the other names clients send; parameters and case dropped. */
export function normalizeMimeType(type: string): string {
  const bare = mimeEssence(type);
  return typeOfMime(bare)?.mimeType ?? bare;
}

/** "Word document", "Excel workbook"… for messages. */
export function labelOf(mimeType: string): string | undefined {
  return typeOfMime(mimeType)?.label;
}

/** The usual extension with its dot (".docx"), or '' for a type we do not know. */
export function extensionFor(mimeType: string): string {
  const ext = typeOfMime(mimeType)?.extensions[0];
  return ext ? `.${ext}` : '';
}

export { magic };
