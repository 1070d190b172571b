import { LoaderError } from './errors.ts';
import { tooMuchText } from './common.ts';
import { isOoxml, magic, MIME } from './mime.ts';
import { verifyZip } from './zip-guard.ts';
import type { LoadedDocument, ParseOptions } from './types.ts';

type Parser = (data: Buffer, opts: ParseOptions) => LoadedDocument | Promise<LoadedDocument>;

interface Format {
  /** Imported on demand: a worker reading a CSV should not pay for loading pdf.js and exceljs. */
  parser: () => Promise<Parser>;
  /** Said when the library fails on the bytes. */
  corrupt: string;
  /** Said when the file is readable but has no text. */
  empty: string;
}

const FORMATS: Readonly<Record<string, Format>> = {
  [MIME.text]: {
    parser: async () => (await import('./text.ts')).parsePlainText,
    corrupt: 'The text file could not be read.',
    empty: 'The text file is empty.',
  },
  [MIME.markdown]: {
    parser: async () => (await import('./text.ts')).parseMarkdown,
    corrupt: 'The Markdown file could not be read.',
    empty: 'The Markdown file is empty.',
  },
  [MIME.csv]: {
    parser: async () => (await import('./text.ts')).parseCsv,
    corrupt: 'The CSV file could not be read.',
    empty: 'The CSV file has no rows with values.',
  },
  [MIME.json]: {
    parser: async () => (await import('./text.ts')).parseJson,
    corrupt: 'The JSON file could not be read: it is not valid JSON.',
    empty: 'The JSON file contains no values.',
  },
  [MIME.pdf]: {
    parser: async () => (await import('./pdf.ts')).parsePdf,
    corrupt: 'The PDF could not be read: it is damaged or encrypted.',
    empty: 'The PDF contains no text that can be extracted; it may consist of scanned images.',
  },
  [MIME.docx]: {
    parser: async () => (await import('./docx.ts')).parseDocx,
    corrupt: 'The Word document could not be read: it is damaged or password-protected.',
    empty: 'The Word document contains no text.',
  },
  [MIME.pptx]: {
    parser: async () => (await import('./pptx.ts')).parsePptx,
    corrupt: 'The PowerPoint presentation could not be read: it is damaged or password-protected.',
    empty: 'The PowerPoint presentation contains no text.',
  },
  [MIME.xlsx]: {
    parser: async () => (await import('./xlsx.ts')).parseXlsx,
    corrupt: 'The Excel workbook could not be read: it is damaged or password-protected.',
    empty: 'The Excel workbook contains no values.',
  },
  [MIME.doc]: {
    parser: async () => (await import('./doc.ts')).parseDoc,
    corrupt: 'The Word document (.doc) could not be read: it is damaged or password-protected.',
    empty: 'The Word document (.doc) contains no text.',
  },
};

export function formatOf(mimeType: string): Format | undefined {
  return Object.hasOwn(FORMATS, mimeType) ? FORMATS[mimeType] : undefined;
}

/**
 * Bytes of a known type to text, with no limits of its own beyond `maxTextChars`: callers
 * run it inside a worker with memory and time limits (see `loadDocument`).
 * `mimeType` must already be normalized.
 */
export async function parseDocument(data: Buffer, mimeType: string, opts: ParseOptions): Promise<LoadedDocument> {
  const format = formatOf(mimeType);
  if (!format) throw new LoaderError('UNSUPPORTED_TYPE', `Files of type ${mimeType} are not supported.`);
  const parse = await format.parser();
  let doc: LoadedDocument;
  try {
    // word-extractor reads .docx bytes sent as .doc too, so those are checked the same way.
    if (isOoxml(mimeType) || (mimeType === MIME.doc && magic.zip(data))) verifyZip(data);
    doc = await parse(data, opts);
  } catch (error) {
    if (error instanceof LoaderError) throw error;
    // Out of room for one string or buffer: the document is too big, not broken.
    if (error instanceof RangeError && /string length|allocation failed/i.test(error.message)) {
      throw new LoaderError('TOO_LARGE', 'The document is too large to read.', { cause: error });
    }
    // Whatever a parsing library throws on bad input (its messages are not for end users).
    throw new LoaderError('CORRUPT', format.corrupt, { cause: error });
  }
  if (doc.text.length > opts.maxTextChars) throw tooMuchText(opts.maxTextChars);
  if (doc.text.trim() === '') throw new LoaderError('EMPTY', format.empty);
  return doc;
}
