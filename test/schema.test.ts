import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { createSchema, printSchemaFile } from '../src/graphql/schema.ts';

it('schema.graphql is what the TypeGraphQL classes produce (run `npm run schema` after changing them)', async () => {
  const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
  expect(printSchemaFile(await createSchema())).toBe(committed);
});

it('speaks the REST vocabulary: enum values spelled as in the interface', () => {
  const sdl = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
  expect(sdl).toMatch(/enum ModelName \{[^}]*model_3_5_turbo\s[^}]*model_3_5_turbo_16k[^}]*model_4\s[^}]*model_4_32k/s);
  expect(sdl).toMatch(/enum Visibility \{\s*private\s*public\s*\}/s);
  expect(sdl).toMatch(/enum PromptType \{\s*customer_support\s*raw\s*\}/s);
});
