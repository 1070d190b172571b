/** npm run schema: writes schema.graphql from the TypeGraphQL classes (a test fails when it drifts). */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { createSchema, printSchemaFile } from '../graphql/schema.ts';

writeFileSync(new URL('../../schema.graphql', import.meta.url), printSchemaFile(await createSchema()));
process.stdout.write('schema.graphql written.\n');
