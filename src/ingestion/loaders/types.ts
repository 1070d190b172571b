/** One page of a paged format: a PDF page, a PowerPoint slide, or an Excel sheet. 1-based. */
export interface LoadedPage {
  page: number;
  text: string;
}

export interface LoadedDocument {
  text: string;
  pages?: LoadedPage[];
  title?: string;
  /** Format-specific facts, e.g. `{ pageCount }`, `{ sheetNames, rows }`. JSON-safe values only. */
  metadata: Record<string, unknown>;
}

export interface ParseOptions {
  maxTextChars: number;
}
