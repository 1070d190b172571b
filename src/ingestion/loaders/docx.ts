import { compile } from 'html-to-text';
import JSZip from 'jszip';
import mammoth from 'mammoth';
import { markdownHeading, TextBudget } from './common.ts';
import { readCoreTitle } from './ooxml.ts';
import type { LoadedDocument, ParseOptions } from './types.ts';

/**
 * Through mammoth's HTML rather than its raw text: the HTML keeps the heading styles (Heading 1-6,
 * Title) as h1-h6, which become Markdown headings the chunker carries into every chunk below them.
 * Table cells stay one paragraph each, as in the raw text.
 */
const toText = compile({
  wordwrap: false,
  formatters: { markdownHeading },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'table', format: 'block' },
    { selector: 'tr', format: 'block' },
    { selector: 'td', format: 'block', options: { leadingLineBreaks: 2, trailingLineBreaks: 2 } },
    { selector: 'th', format: 'block', options: { leadingLineBreaks: 2, trailingLineBreaks: 2 } },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, format: 'markdownHeading' })),
  ],
});

export async function parseDocx(data: Buffer, opts: ParseOptions): Promise<LoadedDocument> {
  // Images are left out unread: their bytes would come back base64-encoded in the HTML.
  const { value } = await mammoth.convertToHtml({ buffer: data }, { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) });
  const plain = toText(value)
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const text = new TextBudget(opts.maxTextChars).take(plain);
  const title = await readCoreTitle(await JSZip.loadAsync(data));
  return { text, ...(title ? { title } : {}), metadata: {} };
}
