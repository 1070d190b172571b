/**
 * Checking a form's schema (found by the generated-input tests: every form saved compiled the
 * draft 2020-12 meta-schema again, some 20 ms of the event loop each, 27 ms a case of the
 * createForm fuzz target).
 */
import { describe, expect, it } from 'vitest';
import { checkFormSchema } from '../src/forms/form-schema.ts';

const form = (extra: Record<string, unknown> = {}) => ({ type: 'object', properties: { email: { type: 'string', format: 'email' } }, required: ['email'], ...extra });
const refusal = (schema: unknown) => {
  try {
    checkFormSchema(schema);
    return null;
  } catch (err) {
    return (err as { message: string }).message;
  }
};

describe('checkFormSchema', () => {
  it('checks many schemas without compiling the meta-schema for each (200 in well under 2 s; it was 20 ms or more each)', () => {
    const started = performance.now();
    for (let i = 0; i < 200; i++) checkFormSchema(form({ title: `Form ${i}` }));
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('still refuses keyword values the meta-schema forbids, with its reason', () => {
    expect(refusal(form({ properties: { email: { type: 'text' } } }))).toMatch(/^The form schema is not valid: it does not compile as JSON Schema draft 2020-12 \(schema is invalid: .*type/);
    expect(refusal(form({ minProperties: -1 }))).toMatch(/schema is invalid: .*minProperties/);
    expect(refusal(form({ properties: { a: { $ref: '#/$defs/missing' } } }))).toMatch(/can't resolve reference/);
  });

  it('keeps nothing of a schema it checked: the same $id twice, even the meta-schema\'s own, is accepted and checks go on', () => {
    for (const $id of ['https://example.org/form', 'https://example.org/form', 'https://json-schema.org/draft/2020-12/schema']) {
      expect(refusal(form({ $id }))).toBeNull();
    }
    expect(refusal(form({ properties: { email: { type: 'text' } } }))).toMatch(/schema is invalid/);
    expect(refusal(form({ $schema: 'https://json-schema.org/draft/2020-12/schema' }))).toBeNull();
  });
});
