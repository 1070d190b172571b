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
import { defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  // No react -> preact/compat aliases: the GraphQL IDE (ide.html) runs GraphiQL on React itself.
  plugins: [preact({ prefreshEnabled: false, devToolsEnabled: false, reactAliasesEnabled: false }), quietUseNoMemo()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'ui',
    // Scripts and styles as files: an inline one would need 'unsafe-inline' in the CSP.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    sourcemap: false,
    // GraphiQL with Monaco is megabytes; it loads on its own page only (see test/console-size.test.ts).
    chunkSizeWarningLimit: 5000,
    rollupOptions: {
      input: {
        console: `${root}index.html`,
        // The GraphQL IDE at GET /graphql: its own entry, so none of it loads on the console's pages.
        ide: `${root}ide.html`,
        chat: `${root}chat.html`,
      },
    },
  },
});

/**
 * GraphiQL's modules start with React Compiler's "use no memo", which only React Compiler reads:
 * the bundler's warning that it drops them says nothing to act on. Wraps the preset's own filter.
 */
function quietUseNoMemo(): Plugin {
  return {
    name: 'quiet-use-no-memo',
    enforce: 'post',
    config(config) {
      const inner = config.build?.rollupOptions?.onwarn;
      return {
        build: {
          rollupOptions: {
            onwarn(warning, warn) {
              if (warning.code === 'MODULE_LEVEL_DIRECTIVE' && warning.message.includes('use no memo')) return;
              if (inner) inner(warning, warn);
              else warn(warning);
            },
          },
        },
      };
    },
  };
}
