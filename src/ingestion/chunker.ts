import { createTextSplitter } from '../providers/text-splitter.ts';
import type { LoadedDocument } from './loaders/index.ts';

export interface Piece {
  text: string;
  position: number;
  page: number | null;
  /** The headings above the chunk's start, outermost first, joined by " > "; null when there are none. */
  section?: string | null;
}

/** A datastore's chunking unless it says otherwise (docs/evaluation.md: how the size was chosen). */
export const DEFAULT_CHUNK_SIZE = 1000;
export const DEFAULT_CHUNK_OVERLAP = 200;

/** Characters per token, roughly, for English text; used for the stored-token estimate. */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** A paragraph (or a list, a table) with the headings it sits under. */
interface Block {
  headings: string[];
  text: string;
}

/** What a chunk is packed from: a whole block, or whole sentences of a block too long for one chunk. */
interface Unit {
  headings: string[];
  text: string;
  block: number;
  page: number | null;
}

const HEADING = /^(#{1,6})[ \t]+(.+?)[ \t#]*$/;
const FENCE = /^\s*(```|~~~)/;
const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Splits a document into chunks that keep their context:
 * - a chunk is cut between paragraphs where it can, else between sentences, and only inside a
 *   sentence longer than a whole chunk (then between words);
 * - Markdown headings (loaders turn HTML and DOCX headings into them) are not text of their own:
 *   every chunk starts with the headings it sits under, so what a section is about is embedded
 *   and searched with each of its chunks, and `section` names them for citations;
 * - pages are split one by one, so every chunk knows its page and none straddles two;
 * - neighbouring chunks of one long paragraph share up to `chunkOverlap` characters of whole sentences.
 */
export async function splitDocument(doc: LoadedDocument, opts: { chunkSize: number; chunkOverlap: number }): Promise<Piece[]> {
  const chunkSize = opts.chunkSize;
  const overlap = Math.min(opts.chunkOverlap, Math.floor(chunkSize / 2));
  const sections = doc.pages?.length ? doc.pages.map((p) => ({ text: p.text, page: p.page as number | null })) : [{ text: doc.text, page: null }];
  const words = createTextSplitter({ chunkSize, chunkOverlap: 0 });

  const units: Unit[] = [];
  const state: HeadingState = { headings: [], fenced: false };
  let block = 0;
  for (const section of sections) {
    for (const b of blocksOf(section.text, state)) {
      block++;
      const room = Math.max(chunkSize - headerOf(b.headings).length, Math.floor(chunkSize / 2));
      if (b.text.length <= room) {
        units.push({ headings: b.headings, text: b.text, block, page: section.page });
        continue;
      }
      // Packs leave room for the overlap that the next chunk of the paragraph starts with.
      for (const sentence of await sentencePacks(b.text, Math.max(room - overlap, Math.floor(room / 2)), words)) units.push({ headings: b.headings, text: sentence, block, page: section.page });
    }
  }

  const pieces: Piece[] = [];
  let current: Unit[] = [];
  const flush = () => {
    if (!current.length) return;
    const text = render(current).trim();
    if (text) pieces.push({ text, position: pieces.length, page: current[0]!.page, section: current[0]!.headings.join(' > ') || null });
    current = [];
  };
  for (const unit of units) {
    const last = current[current.length - 1];
    if (last && (last.page !== unit.page || render([...current, unit]).length > chunkSize)) {
      flush();
      // A paragraph cut in two: the next chunk repeats the end of the previous one, in whole sentences.
      if (last.block === unit.block && overlap > 0) {
        const tail = tailSentences(last.text, Math.min(overlap, chunkSize - render([unit]).length - 1));
        if (tail) current.push({ ...unit, text: tail });
      }
    }
    current.push(unit);
  }
  flush();
  return pieces;
}

interface HeadingState {
  headings: string[];
  fenced: boolean;
}

/** Paragraphs with their heading path; heading lines update the path and are not blocks themselves. */
function blocksOf(text: string, state: HeadingState): Block[] {
  const blocks: Block[] = [];
  let lines: string[] = [];
  const end = () => {
    const body = lines.join('\n').trim();
    if (body) blocks.push({ headings: [...state.headings], text: body });
    lines = [];
  };
  for (const line of text.split('\n')) {
    if (FENCE.test(line)) state.fenced = !state.fenced;
    const heading = state.fenced ? null : HEADING.exec(line);
    if (heading) {
      end();
      const level = heading[1]!.length;
      // A skipped level ("#" then "###") leaves no empty step in the path.
      state.headings = [...state.headings.slice(0, level - 1), heading[2]!.trim()];
    } else if (!line.trim() && !state.fenced) {
      end();
    } else {
      lines.push(line);
    }
  }
  end();
  return blocks;
}

/** Whole sentences packed up to `room` characters; a sentence longer than that is cut between words. */
async function sentencePacks(text: string, room: number, words: ReturnType<typeof createTextSplitter>): Promise<string[]> {
  const packs: string[] = [];
  let pack = '';
  for (const { segment } of sentenceSegmenter.segment(text)) {
    const sentence = segment.trim();
    if (!sentence) continue;
    if (pack && pack.length + 1 + sentence.length > room) {
      packs.push(pack);
      pack = '';
    }
    if (sentence.length > room) {
      for (const part of await words.split(sentence)) if (part.trim()) packs.push(part.trim());
      continue;
    }
    pack = pack ? `${pack} ${sentence}` : sentence;
  }
  if (pack) packs.push(pack);
  return packs;
}

function tailSentences(text: string, max: number): string {
  const sentences = [...sentenceSegmenter.segment(text)].map((s) => s.segment.trim()).filter(Boolean);
  let tail = '';
  for (let i = sentences.length - 1; i > 0; i--) {
    const next = tail ? `${sentences[i]} ${tail}` : sentences[i]!;
    if (next.length > max) break;
    tail = next;
  }
  return tail;
}

function headerOf(headings: string[], from = 0): string {
  return headings
    .slice(from)
    .map((h, i) => `${'#'.repeat(from + i + 1)} ${h}\n`)
    .join('');
}

/** The chunk's text: its headings, then its units, with the headings that change between them. */
function render(units: Unit[]): string {
  let out = headerOf(units[0]!.headings);
  units.forEach((unit, i) => {
    const before = units[i - 1];
    if (before) {
      let same = 0;
      while (same < unit.headings.length && same < before.headings.length && unit.headings[same] === before.headings[same]) same++;
      const changed = same < unit.headings.length || unit.headings.length !== before.headings.length;
      out += before.block === unit.block && !changed ? ' ' : `\n\n${changed ? headerOf(unit.headings, same) : ''}`;
    }
    out += unit.text;
  });
  return out;
}
