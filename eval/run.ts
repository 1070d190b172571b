/**
 * npm run eval — builds the evaluation datastore from eval/corpus through the running service (the
 * embedded database in memory unless DATABASE_URL is given) and prints retrieval and answer figures.
 *
 *   npm run eval                              all questions, the default chunk size
 *   npm run eval -- --chunk-sizes 300,500,800 one datastore per size, figures side by side
 *   npm run eval -- --questions 40            a spread sample (what test/evaluation.test.ts runs)
 *   npm run eval -- --no-answers              retrieval only (the answerer embeds sentences: slower)
 *   npm run eval -- --misses                  list the questions the answer missed, and the unanswerable ones' top scores
 *   npm run eval -- --compare                 the answers with the checks before the sentence check too (in process: fragments
 *                                             from 0.45, no sentence check), for a before/after
 *   npm run eval -- --each-part               one small datastore per part (its own 2 or 3 documents; the tuned-on part's
 *                                             28), as a new user's first datastore: answers per part and over all parts
 *   npm run eval -- --rerank-stand-in         rerank with test/support's local stand-in (shows the plumbing, not a model's
 *                                             quality); RERANK_URL (+ RERANK_MODEL, RERANK_API_KEY) uses a real endpoint
 *   EMBEDDING_MODEL=… OPENAI_BASE_URL=… npm run eval   another embedding model (eval/service.ts); answers stay extractive
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE } from '../src/ingestion/chunker.ts';
import type { AnswerChecks } from '../src/answers/extractive.ts';
import { startRerankTestServer } from '../test/support/rerank-server.ts';
import { startEvaluatedService } from './service.ts';
import { answerFigures, buildStore, retrievalOf, checkEvalSet, loadEvalSet, measure, sample, type AnswerFigures, type Answered, type Figures } from './evaluate.ts';

const { values: args } = parseArgs({
  options: {
    'chunk-sizes': { type: 'string' },
    overlap: { type: 'string' },
    questions: { type: 'string' },
    'no-answers': { type: 'boolean' },
    misses: { type: 'boolean' },
    'rerank-stand-in': { type: 'boolean' },
    compare: { type: 'boolean' },
    set: { type: 'string' },
    'each-part': { type: 'boolean' },
  },
});

/** The answerer's checks before the sentence check (docs/evaluation.md), for --compare. */
const BEFORE: AnswerChecks = { relevantScore: 0.45, bySentence: false };

// --set DIR: another set laid out like eval/ (corpus/*.md and questions.tsv), e.g. your own documents and questions.
const set = loadEvalSet(args.set ? path.resolve(args.set) : undefined);
const problems = checkEvalSet(set);
if (problems.length) throw new Error(`The evaluation set has mistakes:\n${problems.join('\n')}`);
const questions = args.questions ? sample(set.questions, Number(args.questions)) : set.questions;
const sizes = (args['chunk-sizes'] ?? String(DEFAULT_CHUNK_SIZE)).split(',').map(Number);

const standIn = args['rerank-stand-in'] ? await startRerankTestServer() : null;
const service = await startEvaluatedService(process.env, standIn ? { RERANK_URL: standIn.url } : {});
const { running } = service;
const log = (s = '') => process.stdout.write(`${s}\n`);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The answers' figures for a list of answered questions, with each part apart when there are several. */
function showAnswers(label: string, answered: Answered[]) {
  const count = (of: Answered[], answerable: boolean) => {
    const kind = of.filter((a) => (a.question.answer != null) === answerable);
    return `${kind.filter((a) => a.nothing).length} of ${kind.length}`;
  };
  const show = (name: string, of: Answered[]) => {
    const a: AnswerFigures = answerFigures(of);
    log(`  answers, ${name}: hit ${pct(a.hit)}, hit in first 300 chars ${pct(a.hitIn300)}, median ${a.medianChars} chars`);
    log(`    unanswerable -> "nothing found" ${pct(a.unanswerableNothing)} (${count(of, false)}), answerable -> "nothing found" ${pct(a.answerableNothing)} (${count(of, true)})`);
  };
  show(label, answered);
  const ids = [...new Set(answered.map((a) => a.question.part ?? 0))].sort();
  if (ids.length > 1) for (const part of ids) show(`${label}, ${partName(part)}`, answered.filter((a) => (a.question.part ?? 0) === part));
}

const partName = (part: number) => (part ? `held-out part ${part}` : 'tuned-on part');

/** --each-part: each part's questions asked of a datastore holding only the documents its answerable questions come from. */
async function eachPart(chunkSize: number, overlap: number) {
  const answered: Answered[] = [];
  for (const part of [...new Set(questions.map((q) => q.part ?? 0))].sort()) {
    const asked = questions.filter((q) => (q.part ?? 0) === part);
    const names = new Set(asked.flatMap((q) => (q.document ? [q.document] : [])));
    const store = await buildStore(running, { documents: set.documents.filter((d) => names.has(d.name)), questions: asked }, { chunkSize, chunkOverlap: overlap });
    const f = await measure(running, store, asked, { answers: true });
    log(`  ${partName(part)}: its own datastore, ${names.size} documents, ${store.chunks} chunks; hybrid top-1 ${pct(f.retrieval.hybrid.top1)}, top-5 ${pct(f.retrieval.hybrid.top5)}, AUC ${f.retrieval.hybrid.auc.toFixed(3)}`);
    answered.push(...f.answered);
    if (args.misses) for (const m of f.misses) log(`  miss: ${m.question} [${m.answer}] -> ${m.got.replace(/\s+/g, ' ')}`);
  }
  showAnswers('each part in its own datastore', answered);
}

try {
  log(`evaluation set: ${set.documents.length} documents, ${questions.length} questions (${questions.filter((q) => !q.answer).length} unanswerable)`);
  log(service.label);
  for (const chunkSize of sizes) {
    const overlap = args.overlap ? Number(args.overlap) : Math.min(DEFAULT_CHUNK_OVERLAP, Math.floor(chunkSize / 5));
    if (args['each-part']) {
      log(`\nchunk size ${chunkSize}, overlap ${overlap}, one datastore per part:`);
      await eachPart(chunkSize, overlap);
      continue;
    }
    let t = performance.now();
    const store = await buildStore(running, set, { chunkSize, chunkOverlap: overlap });
    log(`\nchunk size ${chunkSize}, overlap ${overlap}: ${store.chunks} chunks, ingested in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    {
      const f: Figures = await measure(running, store, questions, { answers: !args['no-answers'], compare: args.compare ? BEFORE : undefined });
      log('  retrieval      top-1    top-5    ROC AUC (top score, answerable vs not)');
      for (const [mode, r] of Object.entries(f.retrieval)) log(`  ${mode.padEnd(12)} ${pct(r.top1).padStart(7)}  ${pct(r.top5).padStart(7)}  ${r.auc.toFixed(3)}`);
      const partIds = [...new Set(questions.map((q) => q.part ?? 0))].sort();
      if (partIds.length > 1) {
        for (const part of partIds) {
          const r = retrievalOf(f.perQuestion.filter((p) => (p.question.part ?? 0) === part));
          log(`  hybrid, ${partName(part)}: ${pct(r.top1)} / ${pct(r.top5)} / ${r.auc.toFixed(3)}`);
        }
      }
      log('  "nothing found" below   unanswerable   answerable (share of each whose top score is below)');
      for (const t of f.thresholds) log(`  ${t.threshold.toFixed(3).padStart(20)}   ${pct(t.unanswerableBelow).padStart(12)}   ${pct(t.answerableBelow).padStart(10)}`);
      if (f.answers) showAnswers('all', f.answered);
      if (f.answeredCompared) showAnswers('before (fragments from 0.45, no sentence check)', f.answeredCompared);
      log(`  time: retrieval ${f.seconds.retrieval.toFixed(1)} s (3 modes), answers ${f.seconds.answers.toFixed(1)} s`);
      if (args.misses) for (const t of f.topScores.filter((t) => !t.positive).sort((a, b) => b.score - a.score)) log(`  unanswerable, top score ${t.score.toFixed(3)}: ${t.question}`);
      if (args.misses) for (const m of f.misses) log(`  miss: ${m.question} [${m.answer}] -> ${m.got.replace(/\s+/g, ' ')}`);
    }
  }
} finally {
  await service.stop();
  await standIn?.close();
}
