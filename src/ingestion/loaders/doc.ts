import { createRequire } from 'node:module';
import { TextBudget } from './common.ts';
import type { LoadedDocument, ParseOptions } from './types.ts';

// word-extractor ships no types; this is the part of its API we use.
interface WordDocument {
  getBody(): string;
  getFootnotes(): string;
  getEndnotes(): string;
}
type WordExtractorClass = new () => { extract(source: Buffer): Promise<WordDocument> };

const WordExtractor = createRequire(import.meta.url)('word-extractor') as WordExtractorClass;

export async function parseDoc(data: Buffer, opts: ParseOptions): Promise<LoadedDocument> {
  const doc = await new WordExtractor().extract(data);
  const parts = [doc.getBody(), doc.getFootnotes(), doc.getEndnotes()].map((part) => part.replace(/\r\n?/g, '\n').trim());
  const text = new TextBudget(opts.maxTextChars).take(parts.filter(Boolean).join('\n\n').replace(/\n{3,}/g, '\n\n'));
  return { text, metadata: {} };
}
