import { getDocumentProxy, getMeta } from 'unpdf';
import { TextBudget } from './common.ts';
import type { LoadedDocument, LoadedPage, ParseOptions } from './types.ts';

// Whitespace handling as in unpdf's own merged output, but per page: runs of spaces collapse,
// line breaks from the text layer stay, at most one blank line remains.
function normalizePage(text: string): string {
  return text
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export async function parsePdf(data: Buffer, opts: ParseOptions): Promise<LoadedDocument> {
  const budget = new TextBudget(opts.maxTextChars);
  // pdf.js takes ownership of (and may detach) the array it is given.
  const pdf = await getDocumentProxy(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), { verbosity: 0 });
  try {
    const pages: LoadedPage[] = [];
    // One page at a time, releasing each, so memory follows the largest page, not the file.
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      let raw = '';
      for (const item of content.items) {
        if ('str' in item) raw += item.str + (item.hasEOL ? '\n' : '');
      }
      page.cleanup();
      const text = normalizePage(raw);
      if (text) pages.push({ page: n, text: budget.take(text) });
    }
    const title = await readTitle(pdf);
    return {
      text: pages.map((p) => p.text).join('\n\n'),
      pages,
      ...(title ? { title } : {}),
      metadata: { pageCount: pdf.numPages },
    };
  } finally {
    await pdf.loadingTask.destroy();
  }
}

async function readTitle(pdf: Parameters<typeof getMeta>[0]): Promise<string | undefined> {
  try {
    const { info } = await getMeta(pdf);
    const title: unknown = info['Title'];
    return typeof title === 'string' && title.trim() ? title.trim() : undefined;
  } catch {
    return undefined; // a missing or broken info dictionary does not make the text unusable
  }
}
