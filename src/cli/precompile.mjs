/**
 * Compiles the service's TypeScript ahead (run by package.json's `prepare`, so by `npm install`),
 * so that `npm start` neither loads the compiler nor compiles at start-up (typescript-hooks.mjs).
 * Starts from an empty cache: results kept for sources edited since the last install go.
 */
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { cacheDir, compiled, root } from './typescript-cache.mjs';

const started = performance.now();
rmSync(cacheDir, { recursive: true, force: true });
let count = 0;
// What `npm start` imports: the service, its REST adapter and its migrations.
for (const dir of ['src', 'rest', 'migrations']) {
  for (const entry of readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.[mc]?ts$/.test(entry.name) || entry.name.endsWith('.d.ts')) continue;
    compiled(path.join(entry.parentPath, entry.name));
    count++;
  }
}
process.stdout.write(`compiled ${count} TypeScript files ahead into ${path.relative(root, cacheDir)} in ${Math.round(performance.now() - started)} ms\n`);
