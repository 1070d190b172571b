/**
 * Chunks that keep their context: what a reader of a retrieved chunk (or the model given it)
 * needs to make sense of it on its own.
 */
import { describe, expect, it } from 'vitest';
import { splitDocument } from '../src/ingestion/chunker.ts';

const MANUAL = `# Vexa Air Pro: Getting Started

## Pairing

Open the lid and press the button on the back of the case for three seconds. Older devices that ask for a code should use the default pairing PIN, which is 0000.

## Battery

The earbuds play for up to 7 hours per charge. The case holds three further full charges.

### Charging the case

The case charges over USB-C. It also charges on any Qi wireless charger.
`;

const sentences = (n: number) => Array.from({ length: n }, (_, i) => `Sentence number ${i + 1} of the long paragraph says something worth keeping whole.`).join(' ');

describe('splitDocument', () => {
  it('starts every chunk with the headings it sits under and names them as its section', async () => {
    const pieces = await splitDocument({ text: MANUAL, metadata: {} }, { chunkSize: 220, chunkOverlap: 40 });
    const pairing = pieces.find((p) => p.text.includes('0000'))!;
    expect(pairing.text.startsWith('# Vexa Air Pro: Getting Started\n## Pairing\n')).toBe(true);
    expect(pairing.section).toBe('Vexa Air Pro: Getting Started > Pairing');
    const qi = pieces.find((p) => p.text.includes('Qi wireless'))!;
    expect(qi.section).toBe('Vexa Air Pro: Getting Started > Battery > Charging the case');
    expect(qi.text).toContain('### Charging the case');
    // Headings are context, never a chunk of their own.
    for (const p of pieces) expect(p.text.split('\n').some((line) => line.trim() && !line.startsWith('#'))).toBe(true);
    for (const p of pieces) expect(p.text.length).toBeLessThanOrEqual(220);
  });

  it('packs short sections together under the size, each with its own heading', async () => {
    const [only, ...rest] = await splitDocument({ text: MANUAL, metadata: {} }, { chunkSize: 1000, chunkOverlap: 200 });
    expect(rest).toEqual([]);
    expect(only!.text).toContain('## Pairing');
    expect(only!.text).toContain('## Battery\nThe earbuds play');
    expect(only!.section).toBe('Vexa Air Pro: Getting Started > Pairing');
  });

  it('cuts a long paragraph between sentences, neighbours sharing whole sentences', async () => {
    const text = sentences(30);
    const pieces = await splitDocument({ text, metadata: {} }, { chunkSize: 400, chunkOverlap: 120 });
    expect(pieces.length).toBeGreaterThan(4);
    for (const p of pieces) {
      expect(p.text.length).toBeLessThanOrEqual(400);
      expect(p.text).toMatch(/^Sentence number \d+ .*whole\.$/);
      expect(p.section).toBeNull();
    }
    // Every sentence is somewhere, and the next chunk begins with the end of the previous one.
    for (let i = 1; i <= 30; i++) expect(pieces.some((p) => p.text.includes(`Sentence number ${i} of`))).toBe(true);
    const lastOfFirst = pieces[0]!.text.match(/Sentence number (\d+) of[^.]*\.$/)![1];
    expect(pieces[1]!.text.startsWith(`Sentence number ${lastOfFirst} of`)).toBe(true);
  });

  it('cuts a sentence longer than a chunk between words, and keeps pages apart', async () => {
    const long = `${'word '.repeat(150).trim()}.`;
    const pieces = await splitDocument({ text: '', metadata: {}, pages: [{ page: 1, text: long }, { page: 2, text: 'Short second page.' }] }, { chunkSize: 200, chunkOverlap: 0 });
    expect(pieces.filter((p) => p.page === 1).length).toBeGreaterThan(2);
    for (const p of pieces) expect(p.text.length).toBeLessThanOrEqual(200), expect(p.text).not.toMatch(/wor$|^ord/);
    expect(pieces.at(-1)).toMatchObject({ page: 2, text: 'Short second page.' });
  });

  it('does not take a "#" line inside a code fence for a heading', async () => {
    const text = '# Setup\n\n```sh\n# install the tool\nnpm i tool\n```\n\nThen run it.';
    const [piece] = await splitDocument({ text, metadata: {} }, { chunkSize: 500, chunkOverlap: 0 });
    expect(piece!.section).toBe('Setup');
    expect(piece!.text).toContain('# install the tool\nnpm i tool');
  });
});
