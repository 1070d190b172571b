/**
 * npm run eval:replay — the evaluation replayed offline for other weightings of Fragment.score and
 * other "nothing found" thresholds, to choose them before a real `npm run eval` confirms.
 *
 * The first run builds the evaluation datastore through the service (as `npm run eval` does) and
 * keeps in a file (--dump): for each question, every candidate of the hybrid search with the two
 * parts of its score (the cosine, the share of the query's words) and the rank each half gave it;
 * and the embedding of every question and of every sentence the answerer could quote. Later runs
 * read that file and need neither the service nor the model: for each weighting they rank the
 * candidates as the search's SQL does, and answer each question with the service's own extractive
 * answerer (its embeddings from the file) for each pair of thresholds. On the service's own
 * weighting and thresholds it gives the figures of `npm run eval` (hybrid retrieval and answers;
 * the text-only ranking breaks ties of its rank by chunk id, which differ from one ingestion to
 * the next, so its figures can differ by a question).
 *
 *   npm run eval:replay -- --dump /tmp/eval-dump.json                          build (first time), then replay
 *   npm run eval:replay -- --dump /tmp/eval-dump.json --weights 1,1.5,2        score = (cosine + w × word share) / (1 + w)
 *   npm run eval:replay -- --dump ... --fragment 0.3:0.5:0.0125 --sentence 0.3:0.4:0.005   the thresholds' grid (from:to:step)
 *   npm run eval:replay -- --dump ... --sentence-weight 2                      the best sentence's relevance weighted the same way
 *   npm run eval:replay -- --dump ... --fragment-lead 0,0.25 --sentence-lead 0,0.25   the weights of the two leads of the sentence check
 *   npm run eval:replay -- --dump ... --max-refused-per-part 5,4               and no more answerable refused on the tuned-on / first held-out part
 *
 * For each weighting it prints top-1 / top-5 / ROC AUC for each part, the "nothing found" counts
 * (unanswerable, answerable) for each pair of thresholds (and weights of the leads; --quiet: only
 * the chosen ones), and the pairs chosen as
 * docs/evaluation.md chose them: on the tuned-on and first held-out parts (266 questions), the most
 * unanswerable questions refused with at most 5% (--max-refused) of the answerable ones.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SOURCES_FOR_ANSWER } from '../src/answers/answer.service.ts';
import { extractiveAnswer, FRAGMENT_LEAD_WEIGHT, RELEVANT_SCORE, SENTENCE_LEAD_WEIGHT, SENTENCE_RELEVANCE, inContext, sentencesOf } from '../src/answers/extractive.ts';
import { WORD_WEIGHT } from '../src/answers/answer.inputs.ts';
import type { Embedder } from '../src/providers/embeddings.ts';
import type { Fragment } from '../src/retrieval/retrieval.service.ts';
import { answerFigures, normalize, rocAuc, type Answered, type EvalQuestion } from './evaluate.ts';

const { values: args } = parseArgs({
  options: {
    dump: { type: 'string' },
    /** Another set laid out like eval/ (corpus/*.md and questions.tsv), for building the dump. */
    set: { type: 'string' },
    weights: { type: 'string' },
    /** The sentence relevance's weight of the word share (the answerer's sentenceWordWeight). */
    'sentence-weight': { type: 'string' },
    /** The weights of the best fragment's lead over the next, added to the best sentence's relevance (the answerer's fragmentLeadWeight), comma-separated. */
    'fragment-lead': { type: 'string' },
    /** The weights of the best sentence's lead over other fragments' sentences (the answerer's sentenceLeadWeight), comma-separated. */
    'sentence-lead': { type: 'string' },
    fragment: { type: 'string' },
    sentence: { type: 'string' },
    /** Of the 266 questions the thresholds are chosen on, at most this share of answerable ones refused. */
    'max-refused': { type: 'string' },
    /**
     * Also at most these counts of answerable questions refused on the tuned-on and first held-out
     * parts apart ("5,4": no more than before the fourth pass), so that neither part pays for the other.
     */
    'max-refused-per-part': { type: 'string' },
    /** The parts the thresholds are chosen on (0 the tuned-on part, 1 the first held-out...); "0,1" (the 266 questions) by default. */
    'choose-on': { type: 'string' },
    /** Read each sentence with its innermost heading only, as before the sixth pass (the answerer's byPath: false). */
    'innermost-heading': { type: 'boolean' },
    /** Judge "nothing found" with every heading's words too (the answerer's judgeByPath). */
    'judge-by-path': { type: 'boolean' },
    /** Only the chosen thresholds, not every pair of the grid. */
    quiet: { type: 'boolean' },
  },
});
if (!args.dump) throw new Error('--dump FILE is required (built on the first run, read on later ones).');

interface Candidate {
  cos: number;
  words: number;
  /** The vector and text halves' ranks (1,000,000: not proposed by that half). */
  vr: number;
  tr: number;
  fragment: Omit<Fragment, 'score'>;
  /** The fragment holds the expected answer and comes from the expected document. */
  holds: boolean;
}

interface Dump {
  questions: { question: EvalQuestion; candidates: Candidate[] }[];
  /** Text -> embedding: the questions and every sentence of every chunk, read with its heading. */
  vectors: Record<string, number[]>;
}

const dump: Dump = existsSync(args.dump) ? JSON.parse(readFileSync(args.dump, 'utf8')) : await build(args.dump);

/** Runs the service once: the candidates and the embeddings. */
async function build(file: string): Promise<Dump> {
  const { startEvaluatedService } = await import('./service.ts');
  const { DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE } = await import('../src/ingestion/chunker.ts');
  const { rawQuery } = await import('../src/db/raw.ts');
  const { searchSql } = await import('../src/retrieval/retrieval.service.ts');
  const { buildStore, checkEvalSet, loadEvalSet } = await import('./evaluate.ts');
  const set = loadEvalSet(args.set ? path.resolve(args.set) : undefined);
  const problems = checkEvalSet(set);
  if (problems.length) throw new Error(`The evaluation set has mistakes:\n${problems.join('\n')}`);
  const service = await startEvaluatedService(process.env);
  const { running } = service;
  process.stdout.write(`${service.label}\n`);
  try {
    const store = await buildStore(running, set, { chunkSize: DEFAULT_CHUNK_SIZE, chunkOverlap: DEFAULT_CHUNK_OVERLAP });
    const { services, db } = running;
    const questions: Dump['questions'] = [];
    for (const q of set.questions) {
      const vector = await services.embedder.embedQuery(q.question);
      // The service's statement for the answerer's top K, its candidates read before they are ranked.
      const { sql, params } = searchSql([store.datastoreId], q.question, vector, SOURCES_FOR_ANSWER, {}, { mode: 'hybrid' });
      const cut = sql.indexOf(',\n    ranked as (');
      if (cut < 0) throw new Error('searchSql changed: the replay cannot find its scored candidates');
      const rows = await rawQuery<{ cos: number; words: number; vr: string; tr: string } & Omit<Fragment, 'score'>>(
        db.orm.em.fork(),
        `${sql.slice(0, cut)}
    select s.cos, s.words, s.vr, s.tr, c.text, coalesce(c.metadata->>'source', d.name) as source,
           c.datasource_id, d.name as datasource_name, c.page, c.custom_id, c.metadata->>'section' as section
    from scored s join chunks c on c.id = s.id join datasources d on d.id = c.datasource_id
    where $9::int8 > 0 and ($11::float8 is null or $11::float8 >= 0)`,
        params,
      );
      questions.push({
        question: q,
        candidates: rows.map(({ cos, words, vr, tr, ...fragment }) => ({
          cos: Number(cos),
          words: Number(words),
          vr: Number(vr),
          tr: Number(tr),
          fragment,
          holds: q.answer != null && store.documentOf.get(fragment.datasource_name) === q.document && normalize(fragment.text).includes(normalize(q.answer)),
        })),
      });
    }
    const texts = new Set(set.questions.map((q) => q.question));
    const chunks = await rawQuery<{ text: string }>(db.orm.em.fork(), 'select text from chunks where datastore_id = $1', [store.datastoreId]);
    for (const { text } of chunks) for (const s of sentencesOf(text)) for (const path of [s.path, s.heading]) texts.add(inContext({ text: s.text, path }));
    const list = [...texts];
    const vectors: Record<string, number[]> = {};
    for (let i = 0; i < list.length; i += 48) {
      const batch = list.slice(i, i + 48);
      (await services.embedder.embedDocuments(batch)).forEach((v, j) => (vectors[batch[j]!] = v));
    }
    const built: Dump = { questions, vectors };
    writeFileSync(file, JSON.stringify(built));
    process.stdout.write(`dumped ${questions.length} questions, ${list.length} texts embedded, to ${file}\n`);
    return built;
  } finally {
    await service.stop();
  }
}

/** The embedder the answerer is given: the dump's vectors. */
const cached: Embedder = {
  provider: 'local',
  model: 'replay',
  dimension: Object.values(dump.vectors)[0]!.length,
  async embedDocuments(texts) {
    return texts.map((t) => {
      const v = dump.vectors[t];
      if (!v) throw new Error(`not in the dump: ${t}`);
      return v;
    });
  },
  async embedQuery(text) {
    return (await this.embedDocuments([text]))[0]!;
  },
};

const range = (spec: string | undefined, fallback: number[]) => {
  if (!spec) return fallback;
  if (!spec.includes(':')) return spec.split(',').map(Number);
  const [from, to, step] = spec.split(':').map(Number);
  const out: number[] = [];
  for (let x = from!; x <= to! + 1e-9; x += step!) out.push(Math.round(x * 10000) / 10000);
  return out;
};
// The equal weight, a middle one, and the service's own (WORD_WEIGHT).
const weights = range(args.weights, [...new Set([1, 1.5, WORD_WEIGHT])]);
const fragmentGrid = range(args.fragment, [RELEVANT_SCORE]);
const sentenceGrid = range(args.sentence, [SENTENCE_RELEVANCE]);
const sentenceWeight = Number(args['sentence-weight'] ?? 1);
const maxRefused = Number(args['max-refused'] ?? 0.05);
const fragmentLeads = range(args['fragment-lead'], [FRAGMENT_LEAD_WEIGHT]);
const sentenceLeads = range(args['sentence-lead'], [SENTENCE_LEAD_WEIGHT]);

const log = (s = '') => process.stdout.write(`${s}\n`);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const chooseOn = new Set((args['choose-on'] ?? '0,1').split(',').map(Number));
const inChosen = (q: EvalQuestion) => chooseOn.has(q.part ?? 0);
const partIds = [...new Set(dump.questions.map((q) => q.question.part ?? 0))].sort();
const PARTS: [string, (q: EvalQuestion) => boolean][] = [
  ['all', () => true],
  ...partIds.map((part): [string, (q: EvalQuestion) => boolean] => [part ? `h${part}` : 'tuned', (q) => (q.part ?? 0) === part]),
  [`chosen-on(${[...chooseOn].join(',')})`, inChosen],
];

/** As the SQL ranks: hybrid by the relevance (ties by the vector half's rank), vector by cosine, text by its own rank. */
function ranked(candidates: Candidate[], w: number, mode: 'hybrid' | 'vector' | 'text') {
  const scored = candidates.map((c) => ({ c, score: Math.min(1, (c.cos + w * c.words) / (1 + w)) }));
  const kept = scored.filter(({ c }) => (mode === 'vector' ? c.vr < 1e6 : mode === 'text' ? c.tr < 1e6 : true));
  const key = (x: (typeof kept)[number]) => (mode === 'hybrid' ? x.score : mode === 'vector' ? x.c.cos : -x.c.tr);
  return kept.sort((a, b) => key(b) - key(a) || a.c.vr - b.c.vr).map((x) => ({ ...x, score: Math.round(x.score * 1e6) / 1e6 }));
}

function retrievalFigures(w: number, mode: 'hybrid' | 'vector' | 'text', keep: (q: EvalQuestion) => boolean) {
  const rows = dump.questions.filter((q) => keep(q.question)).map((q) => ({ q: q.question, top: ranked(q.candidates, w, mode).slice(0, 5) }));
  const answerable = rows.filter((r) => r.q.answer);
  return {
    top1: answerable.filter((r) => r.top[0]?.c.holds).length / answerable.length,
    top5: answerable.filter((r) => r.top.some((x) => x.c.holds)).length / answerable.length,
    auc: rocAuc(rows.map((r) => ({ positive: r.q.answer != null, score: r.top[0]?.score ?? 0 }))),
  };
}

log(`replay of ${dump.questions.length} questions; score = (cosine + w × word share) / (1 + w); sentence word weight ${sentenceWeight}; leads' weights: fragment ${fragmentLeads.join(', ')}, sentence ${sentenceLeads.join(', ')}`);
for (const w of weights) {
  log(`\n== w = ${w}`);
  for (const mode of ['hybrid', 'vector', 'text'] as const) {
    const parts = PARTS.map(([name, keep]) => {
      const r = retrievalFigures(w, mode, keep);
      return `${name} ${pct(r.top1)}/${pct(r.top5)}/${r.auc.toFixed(4)}`;
    });
    log(`  ${mode.padEnd(6)} top-1/top-5/AUC: ${parts.join('  ')}`);
  }
  // Answers for each pair of thresholds; a question's answer depends on the fragment threshold
  // only through how many of its top fragments reach it (they come in descending score).
  const tops = dump.questions.map((q) => ({ q: q.question, fragments: ranked(q.candidates, w, 'hybrid').slice(0, SOURCES_FOR_ANSWER).map((x) => ({ ...x.c.fragment, score: x.score }) as Fragment) }));
  const memo = new Map<string, string>();
  const results: { fragment: number; sentence: number; fragmentLead: number; sentenceLead: number; answered: Answered[] }[] = [];
  for (const fragmentLead of fragmentLeads) for (const sentenceLead of sentenceLeads) {
    for (const fragment of fragmentGrid) {
      for (const sentence of sentenceGrid) {
        const answered: Answered[] = [];
        for (const [i, { q, fragments }] of tops.entries()) {
          const key = `${i}:${fragments.filter((f) => f.score >= fragment).length}:${sentence}:${fragmentLead}:${sentenceLead}`;
          let answer = memo.get(key);
          if (answer == null) {
            const checks = { relevantScore: fragment, sentenceRelevance: sentence, sentenceWordWeight: sentenceWeight, fragmentLeadWeight: fragmentLead, sentenceLeadWeight: sentenceLead, byPath: !args['innermost-heading'], judgeByPath: !!args['judge-by-path'] };
            answer = await extractiveAnswer(q.question, fragments, true, cached, undefined, checks);
            memo.set(key, answer);
          }
          answered.push({ question: q, answer, nothing: answer.startsWith('I found nothing'), at: q.answer ? normalize(answer).indexOf(normalize(q.answer)) : -1, chars: answer.length });
        }
        results.push({ fragment, sentence, fragmentLead, sentenceLead, answered });
      }
    }
  }
  const line = (answered: Answered[]) =>
    PARTS.map(([name, keep]) => {
      const of = answered.filter((a) => keep(a.question));
      const un = of.filter((a) => !a.question.answer);
      const an = of.filter((a) => a.question.answer);
      return `${name} ${un.filter((a) => a.nothing).length}/${un.length} ${an.filter((a) => a.nothing).length}/${an.length}`;
    }).join('  ');
  const figuresOf = (answered: Answered[], byPart = false) => {
    const a = answerFigures(answered);
    const all = `in300 ${pct(a.hitIn300)} median ${a.medianChars}`;
    if (!byPart) return all;
    return `${all} (${PARTS.slice(1)
      .map(([name, keep]) => {
        const p = answerFigures(answered.filter((x) => keep(x.question)));
        return `${name} ${pct(p.hitIn300)} ${p.medianChars}`;
      })
      .join(', ')})`;
  };
  // Chosen on the --choose-on parts (the tuned-on and first held-out by default): the most unanswerable refused with the answerable at most maxRefused.
  const on266 = (r: (typeof results)[number]) => {
    const of = r.answered.filter((a) => inChosen(a.question));
    const un = of.filter((a) => !a.question.answer);
    const an = of.filter((a) => a.question.answer);
    return { un: un.filter((a) => a.nothing).length / un.length, an: an.filter((a) => a.nothing).length / an.length };
  };
  const label = (r: (typeof results)[number]) => `${r.fragment.toFixed(4)} ${r.sentence.toFixed(4)} leads ${r.fragmentLead} ${r.sentenceLead}`;
  if (!args.quiet) for (const r of results) log(`  ${label(r)}  ${line(r.answered)}  ${figuresOf(r.answered)}`);
  const refusedIn = (r: (typeof results)[number], part: number) => r.answered.filter((a) => (a.question.part ?? 0) === part && a.question.answer && a.nothing).length;
  const perPart = args['max-refused-per-part']?.split(',').map(Number);
  const allowed = results.filter((r) => on266(r).an <= maxRefused + 1e-9 && (!perPart || perPart.every((max, part) => refusedIn(r, part) <= max))).sort((a, b) => on266(b).un - on266(a).un || on266(a).an - on266(b).an);
  const best = allowed.filter((r) => on266(r).un === on266(allowed[0]!).un && on266(r).an === on266(allowed[0]!).an);
  for (const r of best) log(`  chosen on parts ${[...chooseOn].join(',')}: ${label(r)}: ${line(r.answered)}  ${figuresOf(r.answered, true)}`);
}
