/**
 * Text splitting for chunking, by LangChain's recursive character splitter: paragraphs, then
 * lines, then words, so a chunk ends at the most natural boundary that keeps it under size.
 */
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';

export interface TextSplitter {
  /** Pieces of at most `chunkSize` characters, neighbours sharing up to `chunkOverlap`. */
  split(text: string): Promise<string[]>;
}

export function createTextSplitter(opts: { chunkSize: number; chunkOverlap: number }): TextSplitter {
  const splitter = new RecursiveCharacterTextSplitter(opts);
  return { split: (text) => splitter.splitText(text) };
}
