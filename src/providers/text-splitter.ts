/**
 * Text splitting for chunking, by LangChain's recursive character splitter: paragraphs, then
 * lines, then words, so a chunk ends at the most natural boundary that keeps it under size.
 */
import type { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import { langchainSplitters } from './langchain.ts';

export interface TextSplitter {
  /** Pieces of at most `chunkSize` characters, neighbours sharing up to `chunkOverlap`. */
  split(text: string): Promise<string[]>;
}

export function createTextSplitter(opts: { chunkSize: number; chunkOverlap: number }): TextSplitter {
  let splitter: RecursiveCharacterTextSplitter | undefined;
  return {
    split: async (text) => {
      splitter ??= new (await langchainSplitters()).RecursiveCharacterTextSplitter(opts);
      return splitter.splitText(text);
    },
  };
}
