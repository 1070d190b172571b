/**
 * The evaluation of eval/ on a spread sample of 40 questions (10 unanswerable), through the real
 * service without a chat model: keeps retrieval and the extractive answers from getting worse
 * than they were when the evaluation landed (docs/evaluation.md has the full figures).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE } from '../src/ingestion/chunker.ts';
import { buildStore, checkEvalSet, loadEvalSet, measure, rocAuc, sample, type Figures } from '../eval/evaluate.ts';
import { startTestApp, type TestApp } from './support/app.ts';

let app: TestApp;
let figures: Figures;
const set = loadEvalSet();

beforeAll(async () => {
  app = await startTestApp();
  // The datastore holds the documents of parts 0 to 6 (39), those of the set when the floors below
  // were last set: each later part's documents would compete with the sample's and move its figures.
  const documents = new Set(set.questions.filter((q) => (q.part ?? 0) <= 6).flatMap((q) => (q.document ? [q.document] : [])));
  const store = await buildStore(app, { ...set, documents: set.documents.filter((d) => documents.has(d.name)) }, { chunkSize: DEFAULT_CHUNK_SIZE, chunkOverlap: DEFAULT_CHUNK_OVERLAP });
  // The sample is drawn from the tuned-on and first held-out parts (266 questions), the set the
  // floors below were measured on: a sample of the whole set would move with every part added.
  figures = await measure(app, store, sample(set.questions.filter((q) => (q.part ?? 0) <= 1), 40));
}, 400_000);

afterAll(async () => {
  await app?.close();
});

describe('the evaluation set', () => {
  it('is large enough, with unanswerable questions, and every expected answer is in its document', () => {
    expect(set.questions.length).toBeGreaterThanOrEqual(200);
    const unanswerable = set.questions.filter((q) => !q.answer).length / set.questions.length;
    expect(unanswerable).toBeGreaterThan(0.15);
    expect(checkEvalSet(set)).toEqual([]);
    expect(figures.questions).toBe(40);
    expect(figures.questions - figures.answerable).toBeGreaterThanOrEqual(8);
  });

  it('rocAuc counts the pairs a score orders right, ties as half', () => {
    expect(rocAuc([{ positive: true, score: 0.9 }, { positive: false, score: 0.1 }])).toBe(1);
    expect(rocAuc([{ positive: true, score: 0.1 }, { positive: false, score: 0.9 }])).toBe(0);
    expect(rocAuc([{ positive: true, score: 0.5 }, { positive: false, score: 0.5 }, { positive: true, score: 0.7 }])).toBe(0.75);
  });
});

// Floors: the figures measured when this last changed, less one question of slack (30 answerable,
// 10 not): hybrid top-1 27/30, top-5 30/30, AUC 0.85; answers 23/30 with the answer in the first
// 300 characters, median 254 characters, 8/10 unanswerable and 1/30 answerable answered "nothing
// found". The set grew by its held-out part (eval/README.md), so the sample is not the one of the
// first floors (AUC 0.94, 5/8 and 2/32 "nothing found" then): the held-out questions are harder
// for the score threshold (docs/evaluation.md), and the answer-kind rule raised the unanswerable
// ones caught. The fragment threshold of 0.375 with the sentence check (docs/evaluation.md) took
// the answerable ones answered "nothing found" from 1/30 to 0/30 on this sample, the rest unchanged.
// The word share weighted 2 to 1 in `score` (docs/evaluation.md, the third pass) took this sample's
// AUC from 0.85 to 0.883 (floor 0.85: an answerable question's top score moving below all ten
// unanswerable ones costs 0.033), the rest unchanged (median 253.5). The fourth pass (the leads
// of the sentence check) left this sample's figures as they were; it changes answers elsewhere.
// The fifth pass (synonyms, names; thresholds chosen on four parts instead of two, and three more
// documents in the datastore) gave this sample: top-1 26/30, AUC 0.887, answers 22/30 in 300
// characters, median 252, and 6/10 unanswerable (8/10 before: the thresholds now weigh the held-out
// parts, whose unanswerable questions the former ones refused less) at 1/30 answerable. The sixth
// pass (sentences ranked with every heading above them; three more documents) raised the answers
// to 26/30 in 300 characters (median 247.5), AUC 0.873, the rest unchanged. The seventh pass (names
// no fragment mentions, the thing a yes/no question asks about, counts; three more documents, part
// 6's) took the unanswerable ones answered "nothing found" from 6/10 to 9/10 (floor 8/10), the rest
// unchanged. Since then the datastore holds parts 0 to 6's documents only (39): with parts 7 and 8's
// too, top-1 read 25/30 and top-5 29/30, because of the datastore, not of the code.
describe('on a 40-question sample, no worse than when this landed', () => {
  it('hybrid retrieval finds the answer, and does better than either half alone', () => {
    const { hybrid, vector, text } = figures.retrieval;
    expect(hybrid.top5).toBeGreaterThanOrEqual(29 / 30);
    expect(hybrid.top1).toBeGreaterThanOrEqual(26 / 30);
    expect(hybrid.top1).toBeGreaterThanOrEqual(text.top1);
    expect(hybrid.top1).toBeGreaterThanOrEqual(vector.top1);
  });

  it('the top score separates what the knowledge base can answer from what it cannot', () => {
    expect(figures.retrieval.hybrid.auc).toBeGreaterThanOrEqual(0.85);
  });

  it('the extractive answer starts with the answer, stays short, and says "nothing found" when it should', () => {
    const a = figures.answers!;
    expect(a.hitIn300).toBeGreaterThanOrEqual(25 / 30);
    expect(a.medianChars).toBeLessThanOrEqual(350);
    expect(a.unanswerableNothing).toBeGreaterThanOrEqual(8 / 10);
    expect(a.answerableNothing).toBeLessThanOrEqual(1 / 30);
  });
});
