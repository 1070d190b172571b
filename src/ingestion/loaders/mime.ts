export const MIME = {
  csv: 'text/csv',
  text: 'text/plain',
  markdown: 'text/markdown',
  pdf: 'application/pdf',
  json: 'application/json',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  doc: 'application/msword',
} as const;

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

const BY_EXTENSION: Readonly<Record<string, string>> = {
  csv: MIME.csv,
  txt: MIME.text,
  md: MIME.markdown,
  markdown: MIME.markdown,
  pdf: MIME.pdf,
  json: MIME.json,
  pptx: MIME.pptx,
  docx: MIME.docx,
  xlsx: MIME.xlsx,
  doc: MIME.doc,
};

export function mimeTypeFromFileName(fileName: string): string | null {
  // Browsers and some clients send a full path; only the last segment's extension counts.
  const base = fileName.trim().split(/[/\\]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  if (dot < 0) return null;
  const ext = base.slice(dot + 1).toLowerCase();
  return Object.hasOwn(BY_EXTENSION, ext) ? BY_EXTENSION[ext]! : null;
}

// Names that clients (browsers, curl, OS type databases) send for the same formats.
const ALIASES: Readonly<Record<string, string>> = {
  'text/x-markdown': MIME.markdown,
  'text/md': MIME.markdown,
  'text/x-md': MIME.markdown,
  'application/csv': MIME.csv,
  'text/x-csv': MIME.csv,
  'application/x-csv': MIME.csv,
  'text/comma-separated-values': MIME.csv,
  'text/json': MIME.json,
  'application/x-json': MIME.json,
  'application/x-pdf': MIME.pdf,
};

export function normalizeMimeType(type: string): string {
  const bare = type.split(';', 1)[0]!.trim().toLowerCase();
  return Object.hasOwn(ALIASES, bare) ? ALIASES[bare]! : bare;
}
