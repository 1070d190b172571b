import { createTextSplitter } from '../providers/text-splitter.ts';
import type { LoadedDocument } from './loaders/index.ts';

export interface Piece {
  text: string;
  position: number;
  page: number | null;
}

/** A datastore's chunking unless it says otherwise (docs/evaluation.md: how the size was chosen). */
export const DEFAULT_CHUNK_SIZE = 1000;
export const DEFAULT_CHUNK_OVERLAP = 200;

/** Characters per token, roughly, for English text; used for the stored-token estimate. */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/**
 * Splits a document into overlapping chunks. Pages are split one by one, so every chunk
 * knows its page and no chunk straddles two pages.
 */
export async function splitDocument(doc: LoadedDocument, opts: { chunkSize: number; chunkOverlap: number }): Promise<Piece[]> {
  const splitter = createTextSplitter({
    chunkSize: opts.chunkSize,
    chunkOverlap: Math.min(opts.chunkOverlap, Math.floor(opts.chunkSize / 2)),
  });
  const sections = doc.pages?.length ? doc.pages.map((p) => ({ text: p.text, page: p.page as number | null })) : [{ text: doc.text, page: null }];
  const pieces: Piece[] = [];
  for (const section of sections) {
    if (!section.text.trim()) continue;
    for (const text of await splitter.split(section.text)) {
      const trimmed = text.trim();
      if (trimmed) pieces.push({ text: trimmed, position: pieces.length, page: section.page });
    }
  }
  return pieces;
}
