/**
 * node --import @swc-node/register/esm-register bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [rows]
 * Compares two V8 heap snapshots (Chrome's JSON format) by constructor: count and self size of
 * each kind of object in both, sorted by the growth of its self size. What grows with the streams
 * served between the two snapshots is what the service keeps per answer.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: (string[] | string)[] } };
  nodes: number[];
  strings: string[];
}

/** Count and self size per "type:name" (objects by constructor, strings, closures by function name…). */
export function byConstructor(file: string): Map<string, { count: number; size: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0] as string[];
  const width = fields.length;
  const [TYPE, NAME, SIZE] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + TYPE!]!]!;
    // Strings are counted as one kind each: their text would make every one a kind of its own.
    const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : snap.strings[snap.nodes[i + NAME!]!]!.slice(0, 80);
    const key = `${type}:${name}`;
    const row = out.get(key) ?? { count: 0, size: 0 };
    row.count++;
    row.size += snap.nodes[i + SIZE!]!;
    out.set(key, row);
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [a, b, rows = '40'] = process.argv.slice(2);
  if (!a || !b) throw new Error('usage: node --import @swc-node/register/esm-register bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [rows]');
  const before = byConstructor(a);
  const after = byConstructor(b);
  const diff = [...after].map(([key, v]) => {
    const w = before.get(key) ?? { count: 0, size: 0 };
    return { key, count: v.count - w.count, size: v.size - w.size };
  });
  diff.sort((x, y) => y.size - x.size);
  for (const d of diff.slice(0, Number(rows))) process.stdout.write(`${String(d.size).padStart(12)} B  ${String(d.count).padStart(8)}  ${d.key}\n`);
}
