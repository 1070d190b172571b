/**
 * The import graph of src/ and rest/ (read with TypeScript's own pre-processor): no circle, no
 * arrow pointing up the layers, and the outside world imported only under src/providers/.
 * The layers are the ones docs/design.md describes; a new file is placed by its path.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

interface Edge {
  from: string;
  to: string;
}

const files = [...sources('src'), ...sources('rest')];
const known = new Set(files);
const local: Edge[] = [];
const packages: Edge[] = [];
for (const file of files) {
  const info = ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true);
  for (const { fileName } of info.importedFiles) {
    if (fileName.startsWith('.')) {
      const to = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), fileName));
      if (known.has(to)) local.push({ from: file, to });
    } else packages.push({ from: file, to: fileName });
  }
}

/**
 * 0 foundations (errors, ids, config, logger, database plumbing, event bus, queue, GraphQL plumbing),
 * 1 entities, inputs and providers (the outside world) and the value rules entities compute with
 * (a re-sync schedule's next run), 2 services, 3 transports (resolvers, REST, HTTP and its
 * metrics, the protocol adapters), 4 registries and entry points (entity list, schema with its resolver list, app,
 * boot, main, CLI).
 */
const LAYERS: [RegExp, number][] = [
  [/^src\/(entities|app|boot|main)\.ts$|^src\/cli\/|^src\/graphql\/schema\.ts$/, 4],
  [/\.resolver\.ts$|^rest\/|^src\/http\/|^src\/protocols\/|^src\/metrics\/http\.ts$|^src\/graphql\/(context|depth-limit)\.ts$/, 3],
  [/\.entity\.ts$|\.inputs\.ts$|^src\/providers\/|^src\/ingestion\/loaders\/|^src\/files\/|^src\/auth\/(auth|secrets)\.ts$|^src\/db\/(vector\.type|base\.entity)\.ts$|^src\/ingestion\/resync-schedule\.ts$/, 1],
  [/^src\/(errors|ids|vocabulary|config|logger|cache|slots)\.ts$|^src\/db\/|^src\/graphql\/|^src\/events\/|^src\/queue\//, 0],
  [/^src\//, 2],
];
/** Imports of the outside world kept outside providers/, each with the reason. */
const ALLOWED_LEAKS: Record<string, string> = {
  'src/universal/media.ts imports node:child_process': 'it forks our own media worker (this code base in a child process), not an outside tool',
  'src/db/pglite-initdb.ts imports node:child_process': "it runs the embedded database's first initdb in a Node child of our own (its memory is freed with the child), not an outside tool",
};

const layerOf = (file: string) => LAYERS.find(([pattern]) => pattern.test(file))![1];

/** Packages that talk to the outside world (models, storage, media tools): only providers import them. */
const OUTSIDE = /^(@langchain\/|openai$|sharp$|music-metadata|tesseract\.js|@tesseract\.js-data\/|@energetic-ai\/|@google-cloud\/storage|node:child_process$|child_process$)/;

describe('import graph', () => {
  it('has no circle', () => {
    const next = new Map<string, string[]>();
    for (const { from, to } of local) next.set(from, [...(next.get(from) ?? []), to]);
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') return void circles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
      state.set(file, 'open');
      for (const to of next.get(file) ?? []) visit(to, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('points down the layers (or stays in one)', () => {
    const upward = local.filter(({ from, to }) => layerOf(to) > layerOf(from)).map(({ from, to }) => `${from} (${layerOf(from)}) -> ${to} (${layerOf(to)})`);
    expect(upward).toEqual([]);
  });

  it('reaches models, storage and media tools only through src/providers/', () => {
    const leaks = packages.filter(({ from, to }) => OUTSIDE.test(to) && !from.startsWith('src/providers/'))
      .map(({ from, to }) => `${from} imports ${to}`)
      .filter((leak) => !ALLOWED_LEAKS[leak]);
    expect(leaks).toEqual([]);
    // The rule would see a leak: the providers do import these packages.
    expect(packages.some(({ from, to }) => from.startsWith('src/providers/') && OUTSIDE.test(to))).toBe(true);
  });
});
