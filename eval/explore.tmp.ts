import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { start } from '../src/boot.ts';
import { loadConfig } from '../src/config.ts';
import { contentWords, sentencesOf } from '../src/answers/extractive.ts';
import { buildStore, loadEvalSet } from './evaluate.ts';
import { writeFileSync } from 'node:fs';

const set = loadEvalSet();
const dataDir = mkdtempSync(path.join(tmpdir(), 'explore-'));
const running = await start(loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: 'pglite://memory', LOG_LEVEL: 'silent', OPENAI_BASE_URL: '', OPENAI_API_KEY: '' }));
const store = await buildStore(running, set, { chunkSize: 1000, chunkOverlap: 200 });
const { services, db } = running;
const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const rows: any[] = [];
for (const q of set.questions) {
  const vector = await services.embedder.embedQuery(q.question);
  const fr = await services.retrieval.searchByVector(db.orm.em.fork(), [store.datastoreId], q.question, vector, 5, {}, { mode: 'hybrid' });
  const top = fr[0]?.score ?? 0;
  const rel = fr.filter((f) => f.score >= 0.45);
  const sents: { text: string; heading: string | null; f: number }[] = [];
  for (const [i, f] of rel.entries()) for (const s of sentencesOf(f.text)) sents.push({ ...s, f: i });
  const cands = sents.slice(0, 48);
  let best = 0, bestCos = 0, bestFocus = 0, focusCov = 1;
  const asked = new Set(contentWords(q.question));
  if (cands.length) {
    const ctx = (s: any) => (s.heading ? `${s.heading}: ${s.text}` : s.text);
    const [qv, ...vs] = await services.embedder.embedDocuments([q.question, ...cands.map(ctx)]);
    // subject words: those in headings of relevant fragments or the source name
    const subject = new Set<string>();
    for (const f of rel) { for (const line of f.text.split('\n')) { const h = /^#{1,6}\s+(.+)$/.exec(line.trim()); if (h) contentWords(h[1]!).forEach((w) => subject.add(w)); } contentWords(f.source.replace(/[-_.]/g, ' ')).forEach((w) => subject.add(w)); }
    const focus = [...asked].filter((w) => !subject.has(w));
    const allWords = new Set(rel.flatMap((f) => contentWords(f.text)));
    focusCov = focus.length ? focus.filter((w) => allWords.has(w)).length / focus.length : 1;
    cands.forEach((s, i) => {
      const words = new Set(contentWords(ctx(s)));
      const shared = [...asked].filter((w) => words.has(w)).length / Math.max(asked.size, 1);
      const fshared = focus.length ? focus.filter((w) => words.has(w)).length / focus.length : 1;
      const c = dot(qv!, vs[i]!);
      best = Math.max(best, c + shared);
      bestCos = Math.max(bestCos, c);
      bestFocus = Math.max(bestFocus, c + fshared);
    });
    const cosines = cands.map((_, i) => dot(qv!, vs[i]!));
    rows.push({ q: q.question, pos: !!q.answer, top, best, bestCos, bestFocus, focusCov, focus, frags: fr.map((f) => ({ text: f.text, source: f.source, score: f.score })), sents: cands.map((s, i) => ({ text: s.text, heading: s.heading, f: s.f, cos: cosines[i] })) });
  } else rows.push({ q: q.question, pos: !!q.answer, top, best: 0, bestCos: 0, bestFocus: 0, focusCov: 0, focus: [], frags: fr.map((f) => ({ text: f.text, source: f.source, score: f.score })), sents: [] });
}
writeFileSync('/tmp/explore/rows2.json', JSON.stringify(rows, null, 1));
await running.stop();
process.exit(0);
