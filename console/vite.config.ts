/**
 * The browser console, its public chat page and the GraphQL IDE: one Vite build into console/dist,
 * served by the service itself (src/http/console.ts). Built at `npm install` (the `prepare`
 * script) so `npm start` needs no build step of its own; `npm run build:console` rebuilds.
 *
 * Every page is an HTML entry below; hashed files go under /ui/ (a prefix no REST path uses).
 * Nothing is inlined: the pages run under a CSP with `script-src 'self'`.
 */
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  plugins: [preact({ prefreshEnabled: false, devToolsEnabled: false })],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'ui',
    // Scripts and styles as files: an inline one would need 'unsafe-inline' in the CSP.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    sourcemap: false,
    rollupOptions: {
      input: {
        console: `${root}index.html`,
        chat: `${root}chat.html`,
      },
    },
  },
});
