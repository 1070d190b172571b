/**
 * The embedded default answerer, used when no chat model is configured. It is not a language
 * model and says so: it answers with the sentence or two of the retrieved fragments that best
 * answer the question, quoted whole, and cites where they come from.
 *
 * Sentences are scored by the same embedding model as the search (the question and every
 * candidate sentence in one batch) plus the share of the question's words they contain: the
 * model alone favours sentences on the right topic that do not hold the fact, the words alone
 * miss paraphrases. Measured on eval/ (docs/evaluation.md).
 */
import type { Embedder } from '../providers/embeddings.ts';
import type { Fragment } from '../retrieval/retrieval.service.ts';
import { SYNONYM_WEIGHT, synonymsOf } from '../retrieval/synonyms.ts';
import { askedKinds, askedThing, holdsKind, isAcronym } from './answer-type.ts';
import { escapeRegExp } from '../regexp.ts';

export const NO_DATASTORE_ANSWER = 'This agent has no knowledge to answer from: no datastore is linked to it yet.';
export const NOTHING_FOUND_ANSWER = 'I found nothing about this in the knowledge base.';
export const QUOTE_NOTE = 'No language model is configured, so this answer quotes the knowledge base rather than writing one.';

/**
 * Below this score (Fragment.score) a fragment is not about the question. Chosen on the
 * evaluation set, together with SENTENCE_RELEVANCE and the leads' weights: see docs/evaluation.md
 * for the trade-off at each threshold. (0.45 before the sentence check; 0.375 while the score
 * weighed the word share like the cosine.)
 */
export const RELEVANT_SCORE = 0.35;
/**
 * Below this, the fragments are about the subject but no sentence of them about the question:
 * "nothing found". What is compared is the best sentence's relevance ((its cosine to the question,
 * read with its headings, + the share of the question's words it holds with its innermost heading,
 * synonyms counting SYNONYM_WEIGHT) / 2, in [0, 1]) plus a weight of each of two leads (leadOf):
 * how far the best fragment scores above the next (FRAGMENT_LEAD_WEIGHT), and how far the best
 * sentence is above the best sentence of another fragment (SENTENCE_LEAD_WEIGHT). Chosen on the
 * evaluation set (docs/evaluation.md: 0.35 on the relevance alone before the fourth pass, 0.405
 * with the leads before the fifth, 0.385 before the sixth, when the words counted were those of
 * every heading above the sentence).
 */
export const SENTENCE_RELEVANCE = 0.28;
/** The weight of the best fragment's lead over the next, added to the best sentence's relevance before SENTENCE_RELEVANCE. */
export const FRAGMENT_LEAD_WEIGHT = 0.25;
/** The weight of the best sentence's lead over other fragments' sentences, added likewise. */
export const SENTENCE_LEAD_WEIGHT = 0.25;
/** Sentences embedded per answer: bounds the model's work (a CPU-bound local model answers in ~0.2 s). */
const MAX_SENTENCES = 48;
/** A best sentence shorter than this takes the next sentence along, which often holds the detail. */
const SHORT_SENTENCE = 90;
/** A second quote is added when it scores nearly as well, as long as the answer stays short. */
const SECOND_QUOTE_MARGIN = 0.05;
const MAX_ANSWER_CHARS = 450;

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

interface Sentence {
  text: string;
  /** The innermost heading above the sentence in its fragment (chunks start with theirs): cited. */
  heading: string | null;
  /** Every heading above it, outermost first ("Mirewood > The mill"): what it is read with. */
  path: string | null;
  fragment: number;
  index: number;
}

/**
 * A fragment's sentences, whole, each with the heading it sits under and the path of headings
 * down to it: lines first (headings and list items carry no full stop), then sentences. Heading
 * lines are context, never quoted.
 */
export function sentencesOf(text: string): { text: string; heading: string | null; path: string | null }[] {
  const out: { text: string; heading: string | null; path: string | null }[] = [];
  const headings: string[] = [];
  for (const line of text.split(/\n+/)) {
    const trimmed = line.trim();
    const h = /^(#{1,6})\s+(.+)$/.exec(trimmed);
    if (h) {
      headings.length = Math.min(headings.length, h[1]!.length - 1);
      headings[h[1]!.length - 1] = h[2]!.trim();
    }
    if (!trimmed || h) continue;
    const present = headings.filter(Boolean);
    const heading = present.at(-1) ?? null;
    const path = present.length ? present.join(' > ') : null;
    for (const { segment } of segmenter.segment(trimmed)) {
      const sentence = segment.replace(/\s+/g, ' ').trim();
      if (/[\p{L}\p{N}]/u.test(sentence)) out.push({ text: sentence, heading, path });
    }
  }
  return out;
}

const STOP_WORDS = new Set(
  'a an and are as at be by can could do does did for from has have how i if in is it its me my of on or our should so that the their there this to was what when where which who why will with would you your'.split(' '),
);

/**
 * Lower-cased words without stop words or accents, with a plural or verb "s" taken off, and a
 * possessive or a contraction: the question's "Mirewood's" is the sentence's "Mirewood", "I'm" is
 * "I", "cafe" is "café".
 */
export function contentWords(text: string): string[] {
  return (foldAccents(text).toLowerCase().replace(/['’](?:s|m|re|ve|ll|d)\b/g, '').match(/[\p{L}\p{N}]+(?:[.,'][\p{L}\p{N}]+)*/gu) ?? []).filter((w) => !STOP_WORDS.has(w)).map((w) => (w.length > 3 ? w.replace(/s$/, '') : w));
}

/** The checks of the answerer, each of which can be switched off (the evaluation measures them apart). */
export interface AnswerChecks {
  /** The quote must hold the kind of value asked (answer-type.ts); true by default. */
  byKind?: boolean;
  /** Read each sentence with every heading above it (true, the default), or with the innermost only. */
  byPath?: boolean;
  /** Judge the best sentence ("nothing found") by the words of every heading above it too, not only its innermost one; false by default. */
  judgeByPath?: boolean;
  /** Quote only the fragments naming most of the names the question uses (namedFragments); true by default. */
  byName?: boolean;
  /** Answer "nothing found" when the question names something none of the relevant fragments mention (unknownNames); true by default. */
  byUnknownName?: boolean;
  /** A yes/no question about a thing being there or offered (askedThing) is answered only by quotes that name it; true by default. */
  byThing?: boolean;
  /** The best sentence must reach SENTENCE_RELEVANCE; true by default. */
  bySentence?: boolean;
  /** The fragments' threshold; RELEVANT_SCORE by default. */
  relevantScore?: number;
  /** The best sentence's threshold; SENTENCE_RELEVANCE by default. */
  sentenceRelevance?: number;
  /** The weight of the share of the question's words in a sentence's relevance, against its cosine's 1; 1 by default. */
  sentenceWordWeight?: number;
  /** The weight of the best fragment's lead over the next one (leadOf), added to the best sentence's relevance; FRAGMENT_LEAD_WEIGHT by default. */
  fragmentLeadWeight?: number;
  /** The weight of the best sentence's lead over the best sentence of another fragment, added to its relevance; SENTENCE_LEAD_WEIGHT by default. */
  sentenceLeadWeight?: number;
}

export async function extractiveAnswer(question: string, fragments: Fragment[], hasKnowledge: boolean, embedder: Embedder, signal?: AbortSignal, opts: AnswerChecks = {}): Promise<string> {
  if (!hasKnowledge) return NO_DATASTORE_ANSWER;
  // The fragments relevant enough to quote, in retrieval order.
  const relevant = fragments.filter((f) => f.score >= (opts.relevantScore ?? RELEVANT_SCORE));
  if (!relevant.length) return NOTHING_FOUND_ANSWER;
  // "Does the Corvid L2 work with Alexa?": the lock's fragments are about the question's subject,
  // but none of them names Alexa, so none of them can say. Checked before the model's work.
  const unknown = opts.byUnknownName === false ? [] : unknownNames(question, relevant);
  if (unknown.length) return `${NOTHING_FOUND_ANSWER} It does not mention ${unknown.map((n) => `"${n}"`).join(' or ')}.`;
  const ranked = await rankSentences(question, relevant, embedder, signal, opts);
  if (!ranked) return NOTHING_FOUND_ANSWER;
  const { sentences, candidates, scores, order } = ranked;
  // A question about a detail the datastore lacks finds its subject's fragments, which score alike
  // (they share its words), and sentences of several of them that answer it equally badly; the
  // fragment and the sentence that hold the detail asked for stand out.
  const [topScore, ...otherScores] = fragments.map((f) => f.score).sort((a, b) => b - a);
  const lead = (opts.fragmentLeadWeight ?? FRAGMENT_LEAD_WEIGHT) * leadOf(topScore!, otherScores) + (opts.sentenceLeadWeight ?? SENTENCE_LEAD_WEIGHT) * ranked.sentenceLead;
  if (opts.bySentence !== false && ranked.bestRelevance + lead < (opts.sentenceRelevance ?? SENTENCE_RELEVANCE)) return NOTHING_FOUND_ANSWER;

  const best = candidates[order[0]!]!;
  let first = best.text;
  const next = sentences.find((s) => s.fragment === best.fragment && s.index === best.index + 1);
  if (first.length < SHORT_SENTENCE && next && first.length + next.text.length < MAX_ANSWER_CHARS) first = `${first} ${next.text}`;
  const quotes = [{ text: first, heading: best.heading, fragment: relevant[best.fragment]! }];

  const runnerUp = order.slice(1).find((i) => !first.includes(candidates[i]!.text));
  if (runnerUp != null && scores[runnerUp]! >= scores[order[0]!]! - SECOND_QUOTE_MARGIN && first.length + candidates[runnerUp]!.text.length < MAX_ANSWER_CHARS) {
    quotes.push({ text: candidates[runnerUp]!.text, heading: candidates[runnerUp]!.heading, fragment: relevant[candidates[runnerUp]!.fragment]! });
  }
  // "What colour is the kettle?" retrieves the kettle's manual; a quote naming no colour does not answer it.
  const kinds = opts.byKind === false ? null : askedKinds(question);
  if (kinds && !holdsKind(quotes.map((quote) => quote.text).join(' '), kinds, question)) return NOTHING_FOUND_ANSWER;
  // "Is there parking at Ferncliff?": a quote about Ferncliff that names no parking does not answer it.
  const thing = opts.byThing === false ? null : askedThing(question);
  if (thing && !namesThing(quotes.map((quote) => inContext({ text: quote.text, path: quote.heading })).join(' '), thing)) return NOTHING_FOUND_ANSWER;
  const lines = quotes.map((quote) => `"${quote.text}" (${cite(quote.fragment, quote.heading)})`);
  return `${lines.join('\n\n')}\n\n${QUOTE_NOTE}`;
}

interface RankedSentences {
  /** Every sentence of those fragments; `candidates` are the first MAX_SENTENCES of them. */
  sentences: Sentence[];
  candidates: Sentence[];
  scores: number[];
  /** Indexes into `candidates` that may be quoted (namedFragments), best first. */
  order: number[];
  /** The best candidate's relevance to the question in [0, 1]: (cosine + share of the question's words, with its innermost heading) / 2. */
  bestRelevance: number;
  /** leadOf the best candidate's relevance over those of the sentences of other fragments (not the same text: chunks overlap). */
  sentenceLead: number;
}

/** The relevant fragments' sentences scored against the question; null when they have none. */
async function rankSentences(question: string, relevant: Fragment[], embedder: Embedder, signal: AbortSignal | undefined, opts: AnswerChecks): Promise<RankedSentences | null> {
  const { sentenceWordWeight: wordWeight = 1 } = opts;
  // Quoted: a sentence of the fragments naming what the question names. The others' sentences are
  // still read, for the sentence lead.
  const named = new Set(opts.byName === false ? relevant : namedFragments(question, relevant));

  const sentences: Sentence[] = [];
  for (const [fragment, f] of relevant.entries()) {
    for (const [index, { text, heading, path }] of sentencesOf(f.text).entries()) sentences.push({ text, heading, path: opts.byPath === false ? heading : path, fragment, index });
  }
  const candidates = sentences.slice(0, MAX_SENTENCES);
  if (!candidates.length) return null;

  const [q, ...vectors] = await embedder.embedDocuments([question, ...candidates.map(inContext)], signal);
  const asked = new Set(contentWords(question));
  const alike = synonymsByWord(question);
  const share = (text: string) => {
    const words = new Set(contentWords(text));
    let found = 0;
    for (const w of asked) {
      if (words.has(w)) found++;
      else if (alike.get(w)?.some((a) => words.has(a))) found += SYNONYM_WEIGHT;
    }
    return found / Math.max(asked.size, 1);
  };
  const cosines = candidates.map((_, i) => dot(q!, vectors[i]!));
  // Ranked with every heading above the sentence: the document's title counts for each of its sentences alike.
  const raw = candidates.map((s, i) => cosines[i]! + wordWeight * share(inContext(s)));
  // Judged ("nothing found") with the words of its innermost heading only: the title's words, which
  // every sentence of the subject holds, do not make a sentence about the question.
  const judged = opts.judgeByPath ? raw : candidates.map((s, i) => cosines[i]! + wordWeight * share(inContext({ text: s.text, path: s.heading })));
  // The fragment's own score breaks near-ties in favour of the better fragment.
  const scores = candidates.map((s, i) => raw[i]! + 0.1 * relevant[s.fragment]!.score);
  const ranked = candidates.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  const quotable = ranked.filter((i) => named.has(relevant[candidates[i]!.fragment]!));
  const order = quotable.length ? quotable : ranked;
  const relevance = judged.map((r) => Math.min(1, Math.max(0, r / (1 + wordWeight))));
  const best = order[0]!;
  const top = candidates[best]!;
  const elsewhere = candidates.flatMap((c, i) => (c.fragment !== top.fragment && c.text !== top.text ? [relevance[i]!] : []));
  return { sentences, candidates, scores, order, bestRelevance: relevance[best]!, sentenceLead: leadOf(relevance[best]!, elsewhere) };
}

/** Capitalised words that name no subject: "I", "I'm", days and months. */
const NOT_NAMES = /^(?:I|I['’]\p{L}+|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?|January|February|March|April|May|June|July|August|September|October|November|December)$/u;

/**
 * The names the question uses (capitalised words, not the first: "Ferncliff", "H3") that the
 * fragments know: only the fragments holding the most of them are quoted. "Can I bring my dog to
 * Ferncliff?" is not answered from another place's dog policy; a fragment holds a name as mentionOf
 * reads it. When no fragment holds any of them, all are kept.
 */
export function namedFragments(question: string, fragments: Fragment[]): Fragment[] {
  const names = namesIn(question);
  if (!names.length) return fragments;
  const patterns = names.map(mentionOf);
  const count = (f: Fragment) => patterns.filter((re) => re.test(f.text)).length;
  const counts = fragments.map(count);
  const most = Math.max(0, ...counts);
  return most ? fragments.filter((_, i) => counts[i] === most) : fragments;
}

/** The capitalised words of a question that are not its first word, "I", a day or a month. */
function namesIn(question: string): string[] {
  return [...new Set(question.match(/(?<=[\p{L}\p{N},;:'"()-]\s+)[\p{Lu}][\p{L}\p{N}-]*/gu) ?? [])].filter((n) => !NOT_NAMES.test(n));
}

/**
 * A name as a text mentions it: a whole word, in any case, singular or plural ("Phones" is
 * mentioned by "phone", "Alexa's" by "Alexa", and the other way round).
 */
function mentionOf(name: string): RegExp {
  const forms = [...new Set([name, name.replace(/(?<=\p{L}{3})(?:['’]s|s)$/u, ''), name.replace(/(?<=\p{L}{3})es$/u, '')])].map(escapeRegExp).join('|');
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${forms})(?:e?s|['’]s)?(?![\\p{L}\\p{N}])`, 'iu');
}

/**
 * The names of the question (namesIn, acronyms aside) that none of the fragments mention
 * (mentionOf): "Alexa" in "Does the Corvid L2 work with Alexa?" when the lock's manual never names
 * it, "Tokyo" in a datastore about kettles.
 */
export function unknownNames(question: string, fragments: Fragment[]): string[] {
  const text = fragments.map((f) => f.text).join('\n');
  return namesIn(question).filter((n) => !isAcronym(n) && !mentionOf(n).test(text));
}

/** How far a value (a score, a relevance: 0 to 1) is above the best of the others, at least 0; all of it when there are no others. */
export function leadOf(best: number, others: number[]): number {
  return Math.max(0, best - Math.max(0, ...others));
}

/**
 * Whether a text names the thing (askedThing): one of its words, or a synonym of one (synonyms.ts),
 * as contentWords reads them, or a word that is the start or the end of one ("park" in "parking",
 * "fire" in "campfire").
 */
export function namesThing(text: string, thing: string): boolean {
  const words = new Set(contentWords(text));
  const alike = synonymsByWord(thing);
  return contentWords(thing).every((w) => words.has(w) || alike.get(w)?.some((a) => words.has(a)) || [...words].some((t) => t.length >= 4 && (w.startsWith(t) || w.endsWith(t))));
}

/** "café" read as "cafe": users type without accents. */
function foldAccents(text: string): string {
  return text.normalize('NFD').replace(/\p{M}+/gu, '');
}

/** The question's words (as contentWords reads them) with their synonyms (synonyms.ts), read alike. */
function synonymsByWord(question: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const entry of synonymsOf(question)) {
    const [word, ...alts] = entry.split(' ');
    const key = contentWords(word!)[0];
    if (key) out.set(key, alts.flatMap((a) => contentWords(a)));
  }
  return out;
}

/**
 * A sentence is read with its headings: "Keep warm" tells what "30 minutes" is about, and the
 * document's title that a section's sentence is about the same subject as its introduction.
 */
export function inContext(s: { text: string; path: string | null }): string {
  return s.path ? `${s.path}: ${s.text}` : s.text;
}

function cite(f: Fragment, heading: string | null): string {
  return `${f.source}${heading ? `, ${heading}` : ''}${f.page != null ? `, page ${f.page}` : ''}`;
}

function dot(a: number[], b: number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** Splits text into small pieces (a few words each) so the answer streams like a model's. */
export function* pieces(text: string, wordsPerPiece = 4): Generator<string> {
  const tokens = text.match(/\S+\s*|\s+/g) ?? [];
  for (let i = 0; i < tokens.length; i += wordsPerPiece) yield tokens.slice(i, i + wordsPerPiece).join('');
}
