/**
 * The evaluation, as a library: `npm run eval` (eval/run.ts) and test/evaluation.test.ts both
 * call it. Everything a user would touch goes through the running service: an account made by
 * sign-up, a datastore created over GraphQL, the corpus uploaded as Markdown files over REST and
 * ingested by the real job, answers asked over REST from an agent without a chat model. Only the
 * vector-only and text-only rankings, which no endpoint offers, call the retrieval service's
 * statement directly (the same SQL as the endpoint, one half switched off).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Running } from '../src/boot.ts';
import { SOURCES_FOR_ANSWER } from '../src/answers/answer.service.ts';
import { extractiveAnswer, NOTHING_FOUND_ANSWER, type AnswerChecks } from '../src/answers/extractive.ts';
import { Datastore } from '../src/datastores/datastore.entity.ts';
import type { SearchMode } from '../src/retrieval/retrieval.service.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface EvalDocument {
  name: string;
  text: string;
}

export interface EvalQuestion {
  /** The document that holds the answer; null when the corpus cannot answer. */
  document: string | null;
  question: string;
  /** Verbatim (case- and space-insensitive) in the document; null when unanswerable. */
  answer: string | null;
  /** Written before the answerer's "nothing found" rules were tuned on the others: reported apart too. */
  heldOut?: boolean;
  /** 0: the part tuned on; 1: the first held-out part; 2: the second (eval/README.md). */
  part?: number;
}

export interface EvalSet {
  documents: EvalDocument[];
  questions: EvalQuestion[];
}

export function loadEvalSet(dir = HERE): EvalSet {
  const corpus = path.join(dir, 'corpus');
  const documents = readdirSync(corpus)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => ({ name: f.replace(/\.md$/, ''), text: readFileSync(path.join(corpus, f), 'utf8') }));
  // Questions after a "# held out" line are a held-out part; each such line starts the next part.
  let heldOut = false;
  let part = 0;
  const questions: EvalQuestion[] = [];
  for (const line of readFileSync(path.join(dir, 'questions.tsv'), 'utf8').split('\n')) {
    if (line.startsWith('# held out')) {
      heldOut = true;
      part++;
    }
    if (!line.trim() || line.startsWith('#')) continue;
    const [document, question, answer] = line.split('\t');
    questions.push({ document: document && document !== '-' ? document : null, question: question!.trim(), answer: answer?.trim() || null, heldOut, part });
  }
  return { documents, questions };
}

/** Every question's answer is in its document; a typo in the set would count as a retrieval miss. */
export function checkEvalSet(set: EvalSet): string[] {
  const problems: string[] = [];
  const byName = new Map(set.documents.map((d) => [d.name, normalize(d.text)]));
  for (const q of set.questions) {
    if (!q.answer) continue;
    const text = byName.get(q.document ?? '');
    if (text == null) problems.push(`${q.question}: no document ${q.document}`);
    else if (!text.includes(normalize(q.answer))) problems.push(`${q.question}: "${q.answer}" is not in ${q.document}`);
  }
  return problems;
}

/** Every n-th question, answerable and unanswerable alike, for a quick run. */
export function sample(questions: EvalQuestion[], count: number): EvalQuestion[] {
  if (count >= questions.length) return questions;
  const step = questions.length / count;
  return Array.from({ length: count }, (_, i) => questions[Math.floor(i * step)]!);
}

export function normalize(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ');
}

// ---- building the evaluation datastore through the service ---------------------------------

export interface EvalStore {
  datastoreId: string;
  agentId: string;
  apiKey: string;
  /** Datasource name -> document name. */
  documentOf: Map<string, string>;
  chunks: number;
}

async function call(url: string, body: unknown, token?: string): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
  const json = (await res.json()) as any;
  if (!res.ok || json?.errors) throw new Error(`${url}: ${res.status} ${JSON.stringify(json).slice(0, 500)}`);
  return json;
}

export async function buildStore(running: Running, set: EvalSet, opts: { chunkSize: number; chunkOverlap: number }): Promise<EvalStore> {
  const base = `http://127.0.0.1:${running.port}`;
  const api = `${base}${running.config.restBasePath}`;
  const gql = async (query: string, variables: Record<string, unknown>, token?: string) => (await call(`${base}/graphql`, { query, variables }, token)).data;
  const email = `eval.${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.test`;
  const signUp = await gql(`mutation($i: SignUpInput!) { signUp(input: $i) { token } }`, { i: { email, password: 'evaluation passphrase', organizationName: 'Evaluation' } });
  const apiKey: string = (await gql(`mutation { createApiKey(input: { name: "eval" }) { key } }`, {}, signUp.signUp.token)).createApiKey.key;
  const datastoreId: string = (
    await gql(`mutation($i: CreateDatastoreInput!) { createDatastore(input: $i) { id } }`, { i: { name: `Evaluation ${opts.chunkSize}`, visibility: 'private', chunkSize: opts.chunkSize, chunkOverlap: opts.chunkOverlap } }, apiKey)
  ).createDatastore.id;

  const ids: string[] = [];
  for (const doc of set.documents) {
    const form = new FormData();
    form.append('file', new Blob([doc.text], { type: 'text/markdown' }), `${doc.name}.md`);
    const res = await fetch(`${api}/external/datastores/file-upload/${datastoreId}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${apiKey}` } });
    const body = (await res.json()) as any;
    if (!res.ok) throw new Error(`upload ${doc.name}: ${res.status} ${JSON.stringify(body)}`);
    ids.push(body.id ?? body.datasource?.id ?? body[0]?.id);
  }
  let chunks = 0;
  const documentOf = new Map<string, string>();
  for (const id of ids) {
    for (;;) {
      const ds = (await gql(`query($id: ID!) { datasource(id: $id) { status name chunkCount errorMessage } }`, { id }, apiKey)).datasource;
      if (ds.status === 'synched') {
        chunks += ds.chunkCount;
        documentOf.set(ds.name, ds.name.replace(/\.md$/, ''));
        break;
      }
      if (ds.status === 'error' || ds.status === 'usage_limit_reached') throw new Error(`ingesting ${ds.name}: ${ds.status} ${ds.errorMessage}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const agentId: string = (
    await gql(`mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, { i: { name: 'Evaluator', visibility: 'private', datastoreIds: [datastoreId] } }, apiKey)
  ).createAgent.id;
  return { datastoreId, agentId, apiKey, documentOf, chunks };
}

// ---- measuring -------------------------------------------------------------------------------

export interface RetrievalFigures {
  top1: number;
  top5: number;
  /** ROC AUC of the top fragment's score: answerable (positive) against unanswerable questions. */
  auc: number;
}

export interface AnswerFigures {
  /** Answerable questions whose answer contains the expected string. */
  hit: number;
  /** ... within its first 300 characters. */
  hitIn300: number;
  medianChars: number;
  /** Unanswerable questions answered "nothing found" (higher is better). */
  unanswerableNothing: number;
  /** Answerable questions answered "nothing found" (lower is better). */
  answerableNothing: number;
}

export interface Figures {
  questions: number;
  answerable: number;
  chunks: number;
  /** `reranked`: the service's search with the configured reranker (only when one is). */
  retrieval: Partial<Record<'reranked', RetrievalFigures>> & Record<SearchMode, RetrievalFigures>;
  answers: AnswerFigures | null;
  /** Every question's answer, for figures on a part of the set (answerFigures). */
  answered: Answered[];
  /** The same answerer with other checks, in process (measure's `compare`). */
  answeredCompared: Answered[] | null;
  /** For candidate "nothing found" thresholds on the hybrid top score: the share of each kind of question below it. */
  thresholds: { threshold: number; unanswerableBelow: number; answerableBelow: number }[];
  seconds: { retrieval: number; answers: number };
  misses: { question: string; answer: string; got: string }[];
  /** The hybrid top score of every question. */
  topScores: { question: string; positive: boolean; score: number }[];
  /** Hybrid retrieval of every question, for figures on a part of the set (retrievalOf). */
  perQuestion: { question: EvalQuestion; score: number; top1: boolean; top5: boolean }[];
}

/** Hybrid top-1, top-5 and AUC of some questions (a part of the set). */
export function retrievalOf(rows: Figures['perQuestion']): RetrievalFigures {
  const answerable = rows.filter((r) => r.question.answer);
  return {
    top1: answerable.filter((r) => r.top1).length / (answerable.length || 1),
    top5: answerable.filter((r) => r.top5).length / (answerable.length || 1),
    auc: rocAuc(rows.map((r) => ({ positive: r.question.answer != null, score: r.score }))),
  };
}

const MODES: SearchMode[] = ['hybrid', 'vector', 'text'];
const THRESHOLDS = [0.3, 0.325, 0.35, 0.375, 0.4, 0.425, 0.45, 0.475, 0.5];

export interface Answered {
  question: EvalQuestion;
  nothing: boolean;
  /** Where the expected answer starts in the answer; -1 when it is not in it (or unanswerable). */
  at: number;
  chars: number;
  answer: string;
}

/** The answer figures of some answered questions (a part of the set, or the answerer without a rule). */
export function answerFigures(answered: Answered[]): AnswerFigures {
  const answerable = answered.filter((a) => a.question.answer);
  const unanswerable = answered.filter((a) => !a.question.answer);
  const share = (n: number, of: number) => (of ? n / of : 0);
  return {
    hit: share(answerable.filter((a) => a.at >= 0).length, answerable.length),
    hitIn300: share(answerable.filter((a) => a.at >= 0 && a.at + a.question.answer!.length <= 300).length, answerable.length),
    medianChars: median(answerable.map((a) => a.chars)),
    unanswerableNothing: unanswerable.length ? unanswerable.filter((a) => a.nothing).length / unanswerable.length : 1,
    answerableNothing: share(answerable.filter((a) => a.nothing).length, answerable.length),
  };
}

function answered(question: EvalQuestion, answer: string): Answered {
  return { question, answer, nothing: answer.startsWith(NOTHING_FOUND_ANSWER), at: question.answer ? normalize(answer).indexOf(normalize(question.answer)) : -1, chars: answer.length };
}

/**
 * `compare`: also answers every question in process with these checks (the same search and
 * answerer, e.g. a check off or another threshold), for a before/after in one run.
 */
export async function measure(running: Running, store: EvalStore, questions: EvalQuestion[], opts: { answers?: boolean; compare?: AnswerChecks } = {}): Promise<Figures> {
  const { services, db } = running;
  const answerable = questions.filter((q) => q.answer);
  const topScores: Record<SearchMode, { positive: boolean; score: number; question: string }[]> = { hybrid: [], vector: [], text: [] };
  const perQuestion: Figures['perQuestion'] = [];
  const hits: Record<SearchMode, { top1: number; top5: number }> = { hybrid: { top1: 0, top5: 0 }, vector: { top1: 0, top5: 0 }, text: { top1: 0, top5: 0 } };

  let started = performance.now();
  for (const q of questions) {
    const vector = await services.embedder.embedQuery(q.question);
    for (const mode of MODES) {
      const fragments = await services.retrieval.searchByVector(db.orm.em.fork(), [store.datastoreId], q.question, vector, 5, {}, { mode });
      topScores[mode].push({ positive: q.answer != null, score: fragments[0]?.score ?? 0, question: q.question });
      const holds = fragments.map((f) => q.answer != null && store.documentOf.get(f.datasource_name) === q.document && normalize(f.text).includes(normalize(q.answer)));
      if (mode === 'hybrid') perQuestion.push({ question: q, score: fragments[0]?.score ?? 0, top1: !!holds[0], top5: holds.some(Boolean) });
      if (!q.answer) continue;
      if (holds[0]) hits[mode].top1++;
      if (holds.some(Boolean)) hits[mode].top5++;
    }
  }
  // With a reranker configured, the service's own search (which reranks) is measured too.
  let reranked: RetrievalFigures | null = null;
  if (running.config.rerank) {
    const em = db.orm.em.fork();
    const datastore = await em.findOneOrFail(Datastore, store.datastoreId);
    const points: { positive: boolean; score: number }[] = [];
    let top1 = 0;
    let top5 = 0;
    for (const q of questions) {
      const fragments = await services.retrieval.search(db.orm.em.fork(), [datastore], { query: q.question, topK: 5 });
      points.push({ positive: q.answer != null, score: Math.max(0, ...fragments.map((f) => f.score)) });
      if (!q.answer) continue;
      const holds = fragments.map((f) => store.documentOf.get(f.datasource_name) === q.document && normalize(f.text).includes(normalize(q.answer!)));
      if (holds[0]) top1++;
      if (holds.some(Boolean)) top5++;
    }
    reranked = { top1: top1 / answerable.length, top5: top5 / answerable.length, auc: rocAuc(points) };
  }
  const retrievalSeconds = (performance.now() - started) / 1000;
  const retrieval = Object.fromEntries(
    MODES.map((m) => [m, { top1: hits[m].top1 / answerable.length, top5: hits[m].top5 / answerable.length, auc: rocAuc(topScores[m]) }]),
  ) as Record<SearchMode | 'reranked', RetrievalFigures>;
  if (reranked) retrieval.reranked = reranked;

  let answers: AnswerFigures | null = null;
  const misses: Figures['misses'] = [];
  const results: Answered[] = [];
  let compared: Answered[] | null = null;
  started = performance.now();
  if (opts.answers !== false) {
    const api = `http://127.0.0.1:${running.port}${running.config.restBasePath}`;
    for (const q of questions) {
      const { answer } = (await call(`${api}/agents/${store.agentId}/query`, { query: q.question }, store.apiKey)) as { answer: string };
      const a = answered(q, answer);
      results.push(a);
      if (!q.answer) {
        if (!a.nothing) misses.push({ question: q.question, answer: '(unanswerable)', got: answer.slice(0, 300) });
      } else if (!(a.at >= 0 && a.at + q.answer.length <= 300)) misses.push({ question: q.question, answer: q.answer, got: answer.slice(0, 300) });
    }
    answers = answerFigures(results);
    if (opts.compare) {
      const datastore = await db.orm.em.fork().findOneOrFail(Datastore, store.datastoreId);
      compared = [];
      for (const q of questions) {
        const fragments = await services.retrieval.search(db.orm.em.fork(), [datastore], { query: q.question, topK: SOURCES_FOR_ANSWER });
        compared.push(answered(q, await extractiveAnswer(q.question, fragments, true, services.embedder, undefined, opts.compare)));
      }
    }
  }
  return {
    questions: questions.length,
    answerable: answerable.length,
    chunks: store.chunks,
    retrieval,
    answers,
    answered: results,
    answeredCompared: compared,
    thresholds: THRESHOLDS.map((threshold) => {
      const below = (positive: boolean) => {
        const of = topScores.hybrid.filter((p) => p.positive === positive);
        return of.length ? of.filter((p) => p.score < threshold).length / of.length : 0;
      };
      return { threshold, unanswerableBelow: below(false), answerableBelow: below(true) };
    }),
    seconds: { retrieval: retrievalSeconds, answers: (performance.now() - started) / 1000 },
    misses,
    topScores: topScores.hybrid,
    perQuestion,
  };
}

/** The probability that a random positive scores above a random negative (ties count half). */
export function rocAuc(points: { positive: boolean; score: number }[]): number {
  const pos = points.filter((p) => p.positive).map((p) => p.score);
  const neg = points.filter((p) => !p.positive).map((p) => p.score);
  if (!pos.length || !neg.length) return NaN;
  let wins = 0;
  for (const p of pos) for (const n of neg) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / (pos.length * neg.length);
}

function median(values: number[]): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
