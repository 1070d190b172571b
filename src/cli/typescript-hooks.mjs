/**
 * Runs the service's TypeScript under `npm start` / `npm run worker` with @swc/core, in the main
 * thread (module.registerHooks). @swc-node/register does the same work from a loader thread that
 * also loads the `typescript` package to read tsconfig.json: about 80 MB of resident memory for
 * the life of the process (docs/operations.md#memory). Plain JavaScript, because it must run
 * before any TypeScript can. Tests and benchmarks keep @swc-node/register; the options below
 * mirror tsconfig.json (legacy decorators with their metadata, which TypeGraphQL and MikroORM read).
 */
import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { transformSync } from '@swc/core';

const OPTIONS = {
  sourceMaps: 'inline',
  jsc: {
    target: 'es2022',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    keepClassNames: true,
  },
  module: { type: 'es6' },
};

registerHooks({
  load(url, context, nextLoad) {
    // Packages ship JavaScript; only our own .ts files need compiling.
    if (!url.startsWith('file:') || !/\.[mc]?ts$/.test(url) || url.includes('/node_modules/')) return nextLoad(url, context);
    const filename = fileURLToPath(url);
    const { code } = transformSync(readFileSync(filename, 'utf8'), { ...OPTIONS, filename });
    return { format: 'module', source: code, shortCircuit: true };
  },
});
