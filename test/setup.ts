import 'reflect-metadata';
import { afterAll } from 'vitest';
import { responseProblems, takeRecorded } from './support/openapi-check.ts';

// Every JSON response a REST test received through support/client.ts must be one the OpenAPI
// document describes: a failing file here means the document (a row's `doc`) or the service is wrong.
afterAll(async () => {
  const byBase = takeRecorded();
  if (!byBase.size) return;
  const [{ createSchema }, { buildOpenApi }, { routes }] = await Promise.all([import('../src/graphql/schema.ts'), import('../rest/openapi.ts'), import('../rest/routes.ts')]);
  const schema = await createSchema();
  const problems = [...byBase].flatMap(([basePath, records]) => responseProblems(buildOpenApi({ schema, routes, basePath }), records));
  if (problems.length) {
    throw new Error(`${problems.length} REST responses do not match the OpenAPI document:\n${problems.slice(0, 20).join('\n')}`);
  }
});
