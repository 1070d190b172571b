/**
 * Summarises a .cpuprofile (from BENCH_PROFILE=<file> or node --cpu-prof): self time by where the
 * code lives (the PGlite engine's WebAssembly, each npm package, each of our files, Node itself,
 * idle and GC), then the functions with the most self time, and the most inclusive time spent
 * under functions of our own code.
 *
 *   node --import @swc-node/register/esm-register bench/cpuprofile-summary.ts <file> [top=30]
 */
import { readFileSync } from 'node:fs';
import { root } from './support.ts';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: cpuprofile-summary.ts <file.cpuprofile> [top]');
const top = Number(topArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Time per sample: the delta to the next sample (V8's convention).
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i + 1] ?? 0;
  selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, dt));
});
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

function where(node: Node): string {
  const { url, functionName } = node.callFrame;
  if (!url) {
    if (/^\((idle|program|garbage collector|root)\)$/.test(functionName)) return functionName;
    if (/^(wasm-function|\$)/.test(functionName) || functionName === '') return 'wasm / native';
    return 'native';
  }
  if (url.startsWith('wasm://')) return 'wasm (PGlite engine)';
  if (url.startsWith('node:')) return 'node internals';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  return url.replace(`file://${root}/`, '');
}

const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((us / totalUs) * 100).toFixed(1).padStart(5)}%`;

const byWhere = new Map<string, number>();
for (const [id, us] of selfUs) {
  const k = where(byId.get(id)!);
  byWhere.set(k, (byWhere.get(k) ?? 0) + us);
}
console.log(`profile: ${(totalUs / 1e6).toFixed(2)} s sampled\n\nself time by location`);
for (const [k, us] of [...byWhere].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)}  ${k}`);

const byFn = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  const k = `${n.callFrame.functionName || '(anonymous)'}  ${where(n)}:${n.callFrame.lineNumber + 1}`;
  byFn.set(k, (byFn.get(k) ?? 0) + us);
}
console.log('\nself time by function');
for (const [k, us] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)}  ${k}`);

// Inclusive time under each function of this repository (src/, rest/), counted once per sample.
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    const w = where(n);
    if (!/^(src|rest)\//.test(w)) continue;
    const k = `${n.callFrame.functionName || '(anonymous)'}  ${w}`;
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
}
console.log('\ninclusive time under functions of src/ and rest/ (synchronous part only: time after an await is not under its caller)');
for (const [k, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)}  ${k}`);
