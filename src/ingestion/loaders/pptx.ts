import { posix } from 'node:path';
import JSZip from 'jszip';
import { XMLParser } from 'fast-xml-parser';
import { TextBudget } from './common.ts';
import { readCoreTitle, xml } from './ooxml.ts';
import type { LoadedDocument, LoadedPage, ParseOptions } from './types.ts';

// Document order matters for slide text (runs of one sentence, paragraphs in sequence), so
// slide bodies are parsed order-preserving; untrimmed, because runs often end with the space
// that separates them from the next run.
const ordered = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  trimValues: false,
});

type XmlNode = Record<string, unknown>;

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function attrs(node: XmlNode): Record<string, string> {
  return (node[':@'] as Record<string, string> | undefined) ?? {};
}

function tagOf(node: XmlNode): string | undefined {
  return Object.keys(node).find((key) => key !== ':@');
}

/** All `a:t` runs, one line per `a:p` paragraph; slide-number and date fields are skipped. */
function drawingText(nodes: XmlNode[]): string {
  const paragraphs: string[] = [];
  let current = '';
  const walk = (list: XmlNode[], inText: boolean): void => {
    for (const node of list) {
      const tag = tagOf(node);
      if (!tag) continue;
      if (tag === '#text') {
        if (inText) current += String(node[tag]);
        continue;
      }
      const children = node[tag] as XmlNode[];
      if (tag === 'a:fld' && /^(slidenum|datetime)/i.test(attrs(node)['@_type'] ?? '')) continue;
      if (tag === 'a:br') {
        current += '\n';
        continue;
      }
      walk(children, tag === 'a:t');
      if (tag === 'a:p') {
        const text = current.replace(/[^\S\n]+/g, ' ').trim();
        if (text) paragraphs.push(text);
        current = '';
      }
    }
  };
  walk(nodes, false);
  return paragraphs.join('\n');
}

function resolvePart(fromPart: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  return posix.normalize(posix.join(posix.dirname(fromPart), target));
}

function relsPathOf(part: string): string {
  return posix.join(posix.dirname(part), '_rels', `${posix.basename(part)}.rels`);
}

interface Relationship {
  id: string;
  type: string;
  target: string;
}

async function readRels(zip: JSZip, part: string): Promise<Relationship[]> {
  const file = zip.file(relsPathOf(part));
  if (!file) return [];
  const doc = xml.parse(await file.async('string')) as { Relationships?: { Relationship?: XmlNode | XmlNode[] } };
  return asArray(doc.Relationships?.Relationship).map((rel) => ({
    id: String(rel['@_Id'] ?? ''),
    type: String(rel['@_Type'] ?? ''),
    target: resolvePart(part, String(rel['@_Target'] ?? '')),
  }));
}

/**
 * Slides in presentation order (presentation.xml's list), which can differ from the numbers
 * in the part names after slides were moved; falls back to those numbers.
 */
async function slideParts(zip: JSZip): Promise<string[]> {
  const presentation = 'ppt/presentation.xml';
  const file = zip.file(presentation);
  if (file) {
    const doc = xml.parse(await file.async('string')) as Record<string, Record<string, XmlNode> | undefined>;
    const ids = asArray(doc['p:presentation']?.['p:sldIdLst']?.['p:sldId'] as XmlNode | XmlNode[] | undefined);
    const rels = new Map((await readRels(zip, presentation)).map((rel) => [rel.id, rel.target]));
    const parts = ids.map((id) => rels.get(String(id['@_r:id']))).filter((p): p is string => !!p && !!zip.file(p));
    if (parts.length) return parts;
  }
  return Object.keys(zip.files)
    .map((name) => /^ppt\/slides\/slide(\d+)\.xml$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((m) => m[0]);
}

async function partText(zip: JSZip, part: string): Promise<string> {
  const file = zip.file(part);
  return file ? drawingText(ordered.parse(await file.async('string')) as XmlNode[]) : '';
}

/** Each slide is a page (1-based position in the deck); speaker notes follow the slide text. */
export async function parsePptx(data: Buffer, opts: ParseOptions): Promise<LoadedDocument> {
  const budget = new TextBudget(opts.maxTextChars);
  const zip = await JSZip.loadAsync(data);
  const parts = await slideParts(zip);
  if (parts.length === 0 && !zip.file('ppt/presentation.xml')) throw new Error('no slides and no presentation part');
  const pages: LoadedPage[] = [];
  let notesCount = 0;
  for (const [index, part] of parts.entries()) {
    const body = await partText(zip, part);
    const notesPart = (await readRels(zip, part)).find((rel) => rel.type.endsWith('/notesSlide'))?.target;
    const notes = notesPart ? await partText(zip, notesPart) : '';
    if (notes) notesCount++;
    const text = [body, notes && `Notes: ${notes}`].filter(Boolean).join('\n\n');
    if (text) pages.push({ page: index + 1, text: budget.take(text) });
  }
  const title = await readCoreTitle(zip);
  return {
    text: pages.map((p) => p.text).join('\n\n'),
    pages,
    ...(title ? { title } : {}),
    metadata: { pageCount: parts.length, slidesWithNotes: notesCount },
  };
}
