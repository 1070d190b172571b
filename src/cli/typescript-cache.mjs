/**
 * Our TypeScript compiled to JavaScript by @swc/core, kept in .cache/typescript/ under a name
 * made of the source's hash, so a kept result is used only for the exact source (and compiler
 * options and version) it came from. @swc/core is loaded only when a file is not there yet.
 * The options mirror tsconfig.json: legacy decorators with their metadata, which TypeGraphQL
 * and MikroORM read. Used by typescript-hooks.mjs (at start) and precompile.mjs (at install).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '..', '..');
export const cacheDir = path.join(root, '.cache', 'typescript');

const require = createRequire(import.meta.url);
const SWC_VERSION = JSON.parse(readFileSync(require.resolve('@swc/core/package.json'), 'utf8')).version;

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
const SALT = JSON.stringify([SWC_VERSION, OPTIONS]);

/** @type {typeof import('@swc/core') | undefined} */
let swc;

/** The JavaScript of one .ts file: from the cache when its source has not changed, else compiled now (and kept). */
export function compiled(filename) {
  const source = readFileSync(filename, 'utf8');
  // The file's name is part of the key: the inline source map names it.
  const key = createHash('sha256').update(SALT).update('\0').update(filename).update('\0').update(source).digest('hex').slice(0, 40);
  const kept = path.join(cacheDir, `${key}.js`);
  try {
    return readFileSync(kept, 'utf8');
  } catch {
    /* not compiled yet */
  }
  swc ??= require('@swc/core');
  const { code } = swc.transformSync(source, { ...OPTIONS, filename });
  try {
    mkdirSync(cacheDir, { recursive: true });
    // Written aside and renamed: a process starting at the same moment never reads half a file.
    const tmp = `${kept}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, kept);
  } catch {
    /* a read-only install: compiled in memory at every start, as before */
  }
  return code;
}
