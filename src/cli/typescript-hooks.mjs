/**
 * Runs the service's TypeScript under `npm start` / `npm run worker`, in the main thread
 * (module.registerHooks), from JavaScript compiled ahead by `npm install` (package.json's
 * `prepare` runs src/cli/precompile.mjs) into .cache/typescript/. A file whose source changed
 * since is compiled by @swc/core on the spot and its result kept for the next start, so editing
 * a file and running `npm start` works as before. With every file compiled ahead, @swc/core's
 * native module (~30 MB resident) is never loaded and start-up compiles nothing
 * (docs/operations.md#memory). Plain JavaScript, because it must run before any TypeScript can.
 */
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { compiled } from './typescript-cache.mjs';

registerHooks({
  load(url, context, nextLoad) {
    // Packages ship JavaScript; only our own .ts files need compiling.
    if (!url.startsWith('file:') || !/\.[mc]?ts$/.test(url) || url.includes('/node_modules/')) return nextLoad(url, context);
    return { format: 'module', source: compiled(fileURLToPath(url)), shortCircuit: true };
  },
});
