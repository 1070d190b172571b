import JSZip from 'jszip';
import mammoth from 'mammoth';
import { TextBudget } from './common.ts';
import { readCoreTitle } from './ooxml.ts';
import type { LoadedDocument, ParseOptions } from './types.ts';

export async function parseDocx(data: Buffer, opts: ParseOptions): Promise<LoadedDocument> {
  const { value } = await mammoth.extractRawText({ buffer: data });
  // mammoth ends every paragraph with a blank line; tables come out one cell per paragraph.
  const text = new TextBudget(opts.maxTextChars).take(value.replace(/\n{3,}/g, '\n\n').trim());
  const title = await readCoreTitle(await JSZip.loadAsync(data));
  return { text, ...(title ? { title } : {}), metadata: {} };
}
