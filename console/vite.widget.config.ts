/**
 * The embeddable chat widget (console/widget/) as one classic script, console/dist/widget.js:
 * a host page loads it with a plain <script src> (no module, no other file to fetch), so it is
 * built in library mode as an IIFE, with its stylesheet inlined as text. Runs after the console's
 * build (vite.config.ts empties dist), hence `emptyOutDir: false`. The gzip size Vite prints is
 * the figure docs/console.md quotes (at most 30 KB, checked by test/console-widget.test.ts).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  publicDir: false,
  build: {
    outDir: 'dist',
    emptyOutDir: false,
    target: 'es2020',
    minify: true,
    sourcemap: false,
    reportCompressedSize: true,
    lib: {
      entry: `${root}widget/widget.ts`,
      formats: ['iife'],
      name: 'agentbaseWidget',
      fileName: () => 'widget.js',
    },
  },
});
