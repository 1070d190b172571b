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
 *   npm run eval -- --rerank-stand-in         rerank with test/support's local stand-in (shows the plumbing, not a model's
 *                                             quality); RERANK_URL (+ RERANK_MODEL, RERANK_API_KEY) uses a real endpoint
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { start } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE } from '../src/ingestion/chunker.ts';
import type { AnswerChecks } from '../src/answers/extractive.ts';
import { startRerankTestServer } from '../test/support/rerank-server.ts';
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
const dataDir = mkdtempSync(path.join(tmpdir(), 'agentbase-eval-'));
const running = await start(
  loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: process.env.DATABASE_URL || 'pglite://memory', LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', OPENAI_BASE_URL: '', OPENAI_API_KEY: '', ...(standIn ? { RERANK_URL: standIn.url } : {}) }),
);
const log = (s = '') => process.stdout.write(`${s}\n`);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

try {
  log(`evaluation set: ${set.documents.length} documents, ${questions.length} questions (${questions.filter((q) => !q.answer).length} unanswerable)`);
  for (const chunkSize of sizes) {
    const overlap = args.overlap ? Number(args.overlap) : Math.min(DEFAULT_CHUNK_OVERLAP, Math.floor(chunkSize / 5));
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
          log(`  hybrid, ${part ? `held-out part ${part}` : 'tuned-on part'}: ${pct(r.top1)} / ${pct(r.top5)} / ${r.auc.toFixed(3)}`);
        }
      }
      log('  "nothing found" below   unanswerable   answerable (share of each whose top score is below)');
      for (const t of f.thresholds) log(`  ${t.threshold.toFixed(3).padStart(20)}   ${pct(t.unanswerableBelow).padStart(12)}   ${pct(t.answerableBelow).padStart(10)}`);
      if (f.answers) {
        const count = (answered: Answered[], answerable: boolean) => {
          const of = answered.filter((a) => (a.question.answer != null) === answerable);
          return `${of.filter((a) => a.nothing).length} of ${of.length}`;
        };
        const show = (label: string, answered: Answered[]) => {
          const a: AnswerFigures = answerFigures(answered);
          log(`  answers, ${label}: hit ${pct(a.hit)}, hit in first 300 chars ${pct(a.hitIn300)}, median ${a.medianChars} chars`);
          log(`    unanswerable -> "nothing found" ${pct(a.unanswerableNothing)} (${count(answered, false)}), answerable -> "nothing found" ${pct(a.answerableNothing)} (${count(answered, true)})`);
        };
        const parts = (label: string, answered: Answered[]) => {
          show(label, answered);
          const ids = [...new Set(answered.map((a) => a.question.part ?? 0))].sort();
          if (ids.length > 1) {
            for (const part of ids) show(`${label}, ${part ? `held-out part ${part}` : 'tuned-on part'}`, answered.filter((a) => (a.question.part ?? 0) === part));
          }
        };
        parts('all', f.answered);
        if (f.answeredCompared) parts('before (fragments from 0.45, no sentence check)', f.answeredCompared);
      }
      log(`  time: retrieval ${f.seconds.retrieval.toFixed(1)} s (3 modes), answers ${f.seconds.answers.toFixed(1)} s`);
      if (args.misses) for (const t of f.topScores.filter((t) => !t.positive).sort((a, b) => b.score - a.score)) log(`  unanswerable, top score ${t.score.toFixed(3)}: ${t.question}`);
      if (args.misses) for (const m of f.misses) log(`  miss: ${m.question} [${m.answer}] -> ${m.got.replace(/\s+/g, ' ')}`);
    }
  }
} finally {
  await running.stop();
  await standIn?.close();
  rmSync(dataDir, { recursive: true, force: true });
}
