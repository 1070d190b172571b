/**
 * GraphQL Code Generator: TypeScript types for the operations written in examples/ and in the
 * browser console (console/src/), from the committed schema.graphql (no server, no network). Run `npm run codegen` after changing an
 * operation or the schema; test/codegen.test.ts fails while the committed output is stale.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const clientConfig = {
  // A string subclass that carries its types: sent as-is with fetch or graphql-sse, no graphql-js parse at run time.
  documentMode: 'string',
  useTypeImports: true,
  // Enums as string unions: the generated file stays type-only.
  enumsAsTypes: true,
  scalars: { DateTimeISO: 'string', JSON: 'unknown', JSONObject: 'Record<string, unknown>' },
};

const config: CodegenConfig = {
  schema: 'schema.graphql',
  // The generated files import each other as .ts: what tsc (allowImportingTsExtensions), vitest and Node's type stripping all load.
  importExtension: '.ts',
  generates: {
    'examples/gql/': {
      documents: ['examples/**/*.ts', '!examples/gql/**'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: clientConfig,
    },
    'console/src/gql/': {
      documents: ['console/src/**/*.{ts,tsx}', '!console/src/gql/**'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: clientConfig,
    },
  },
};

export default config;
