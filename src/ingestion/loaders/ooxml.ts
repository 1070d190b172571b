import JSZip from 'jszip';
import { XMLParser } from 'fast-xml-parser';

export const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
});

/** `dc:title` from docProps/core.xml, shared by the three OOXML formats. */
export async function readCoreTitle(zip: JSZip): Promise<string | undefined> {
  const file = zip.file('docProps/core.xml');
  if (!file) return undefined;
  try {
    const doc = xml.parse(await file.async('string')) as Record<string, Record<string, unknown> | undefined>;
    const title = doc['cp:coreProperties']?.['dc:title'];
    const text = typeof title === 'string' ? title : (title as { '#text'?: unknown } | undefined)?.['#text'];
    return typeof text === 'string' && text.trim() ? text.trim() : undefined;
  } catch {
    return undefined; // the title is a nicety; the body is what matters
  }
}
