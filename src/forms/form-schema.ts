/**
 * A form's JSON Schema: checked when a form is saved, then read as an ordered list of fields,
 * each validated on its own with ajv (draft 2020-12, formats from ajv-formats) and explained
 * in plain words when a value is refused.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { badInput } from '../errors.ts';

// ajv-formats is CommonJS with `exports.default`: the default import is the plugin at run time
// and the module object to TypeScript.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

export type JsonSchema = Record<string, unknown>;

/** How a visitor's text becomes a value (see extract.ts). */
export type FieldKind = 'string' | 'email' | 'date' | 'uri' | 'number' | 'integer' | 'boolean' | 'enum' | 'array' | 'object';

export interface FormField {
  name: string;
  schema: JsonSchema;
  required: boolean;
  kind: FieldKind;
  /** The property's title, else its humanised name ("dateOfBirth" -> "Date of birth"). */
  label: string;
}

export interface CompiledForm {
  /** Required fields first, each group in the order of `properties`. */
  fields: FormField[];
  field(name: string): FormField | undefined;
  /** Null when `value` is valid for the property, else a plain sentence saying why not. */
  check(field: FormField, value: unknown, others: Record<string, unknown>): string | null;
}

export const MAX_FIELDS = 100;

function newAjv(opts: { meta?: boolean } = {}): Ajv2020 {
  // Not strict: schemas written for form builders carry annotations and custom keys (x-…);
  // keyword values are still checked against the draft 2020-12 meta-schema.
  const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false, ...(opts.meta === false ? { meta: false, validateSchema: false } : {}) });
  addFormats(ajv);
  return ajv;
}

/**
 * The draft 2020-12 meta-schema, compiled once: each new Ajv compiles it again (some 20 ms of the
 * event loop for every form saved). It only validates; it keeps nothing of the schemas it checks.
 */
const metaSchema = newAjv();

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function refuse(reason: string): never {
  throw badInput(`The form schema is not valid: ${reason}`, { field: 'schema', reason });
}

/**
 * Checks a form schema: it must compile as JSON Schema draft 2020-12, be of type object with at
 * least one property (each a schema object), and `required` may only name its properties.
 * Throws BAD_USER_INPUT with the reason in the message and in `details.reason`.
 */
export function checkFormSchema(schema: unknown): JsonSchema {
  if (!isObject(schema)) refuse('it must be a JSON object.');
  try {
    if (!metaSchema.validateSchema(schema)) throw new Error(`schema is invalid: ${metaSchema.errorsText(metaSchema.errors)}`);
    // A fresh instance, so nothing of one form's schema (its $id) is seen by the next.
    newAjv({ meta: false }).compile(schema);
  } catch (err) {
    refuse(`it does not compile as JSON Schema draft 2020-12 (${(err as Error).message}).`);
  }
  if (schema.type !== 'object') refuse('its "type" must be "object".');
  const properties = schema.properties;
  if (!isObject(properties) || Object.keys(properties).length === 0) refuse('"properties" must name at least one field.');
  if (Object.keys(properties).length > MAX_FIELDS) refuse(`a form has at most ${MAX_FIELDS} fields.`);
  for (const [name, property] of Object.entries(properties)) {
    if (!isObject(property)) refuse(`the property "${name}" must be a schema object.`);
  }
  const required = schema.required ?? [];
  if (!Array.isArray(required)) refuse('"required" must be an array of property names.');
  for (const name of required) {
    if (typeof name !== 'string' || !Object.hasOwn(properties, name)) refuse(`"required" names "${String(name)}", which is not in "properties".`);
  }
  return schema;
}

/** Compiles a schema already accepted by checkFormSchema. */
export function compileForm(schema: JsonSchema): CompiledForm {
  const ajv = newAjv();
  const validate: ValidateFunction = ajv.compile(schema);
  const properties = schema.properties as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const all = Object.entries(properties).map(([name, property]): FormField => ({
    name,
    schema: property,
    required: required.has(name),
    kind: kindOf(property),
    label: typeof property.title === 'string' && property.title.trim() ? property.title.trim() : humanise(name),
  }));
  const fields = [...all.filter((f) => f.required), ...all.filter((f) => !f.required)];
  const byName = new Map(fields.map((f) => [f.name, f]));

  return {
    fields,
    field: (name) => byName.get(name),
    check(field, value, others) {
      // The whole schema is validated, so $ref, $defs and if/then reach the property; only the
      // errors about this property count (the others are asked about in their turn).
      if (validate({ ...others, [field.name]: value })) return null;
      const path = `/${field.name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      const errors = (validate.errors ?? []).filter((e) => e.instancePath === path || e.instancePath.startsWith(`${path}/`));
      if (!errors.length) return null;
      return explain(field, pickError(errors));
    },
  };
}

/** The error a person can act on: the specific one rather than anyOf/oneOf wrappers. */
function pickError(errors: ErrorObject[]): ErrorObject {
  return errors.find((e) => !['anyOf', 'oneOf', 'allOf', 'if', 'not'].includes(e.keyword)) ?? errors[0]!;
}

const FORMAT_WORDS: Record<string, string> = {
  email: 'a valid email address',
  date: 'a valid date (for example 2026-11-22)',
  'date-time': 'a valid date and time (for example 2026-11-22T14:30:00Z)',
  time: 'a valid time (for example 14:30:00Z)',
  uri: 'a valid web address (for example https://example.com)',
  url: 'a valid web address (for example https://example.com)',
  'uri-reference': 'a valid address',
  hostname: 'a valid host name',
  ipv4: 'a valid IPv4 address',
  ipv6: 'a valid IPv6 address',
  uuid: 'a valid UUID',
};

function list(values: unknown[]): string {
  return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
}

/** One ajv error as a sentence about the field: "Age must be at least 18." */
export function explain(field: FormField, error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  const what = ((): string => {
    switch (error.keyword) {
      case 'type': {
        const type = String(p.type).split(',').find((t) => t !== 'null') ?? String(p.type);
        if (type === 'integer') return 'must be a whole number';
        if (type === 'number') return 'must be a number';
        if (type === 'boolean') return 'needs a yes or a no';
        if (type === 'string') return 'must be text';
        if (type === 'array') return 'must be a list';
        return `must be of type ${type}`;
      }
      case 'minimum':
        return `must be at least ${String(p.limit)}`;
      case 'exclusiveMinimum':
        return `must be more than ${String(p.limit)}`;
      case 'maximum':
        return `must be at most ${String(p.limit)}`;
      case 'exclusiveMaximum':
        return `must be less than ${String(p.limit)}`;
      case 'multipleOf':
        return `must be a multiple of ${String(p.multipleOf)}`;
      case 'minLength':
        return `must be at least ${String(p.limit)} character${p.limit === 1 ? '' : 's'} long`;
      case 'maxLength':
        return `must be at most ${String(p.limit)} characters long`;
      case 'pattern':
        return 'is not in the expected format';
      case 'format':
        return `must be ${FORMAT_WORDS[String(p.format)] ?? `a valid ${String(p.format)}`}`;
      case 'enum':
        return `must be one of: ${list((p.allowedValues as unknown[]) ?? [])}`;
      case 'const':
        return `must be ${list([p.allowedValue])}`;
      case 'minItems':
        return `needs at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`;
      case 'maxItems':
        return `takes at most ${String(p.limit)} items`;
      case 'uniqueItems':
        return 'must not repeat an item';
      default:
        return error.message ?? 'is not valid';
    }
  })();
  return `${capitalise(field.label)} ${what}.`;
}

function kindOf(schema: JsonSchema): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.length) return 'enum';
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => typeof t === 'string' && t !== 'null') as string | undefined;
  switch (type) {
    case 'integer':
    case 'number':
    case 'boolean':
    case 'array':
    case 'object':
      return type;
  }
  switch (schema.format) {
    case 'email':
    case 'idn-email':
      return 'email';
    case 'date':
      return 'date';
    case 'uri':
    case 'url':
    case 'iri':
      return 'uri';
  }
  return 'string';
}

/** "dateOfBirth", "date_of_birth", "date-of-birth" -> "Date of birth". */
export function humanise(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .trim()
    .toLowerCase();
  return capitalise(words || name);
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const lowerFirst = (text: string) => (/^[A-Z][a-z]/.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text);

/** The choices of an enum field, as text. */
export function choices(field: FormField): string[] {
  return Array.isArray(field.schema.enum) ? field.schema.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))) : [];
}

/**
 * The question for a field, from the schema's words: a title or description written as a
 * question is used as is; otherwise "Please give your <label>." with the description as a hint.
 * Then how to answer (yes/no, the choices, the date format) and, for optional fields, how to skip.
 */
export function question(field: FormField): string {
  const title = typeof field.schema.title === 'string' ? field.schema.title.trim() : '';
  const description = typeof field.schema.description === 'string' ? field.schema.description.trim() : '';
  let text: string;
  if (title.endsWith('?')) text = description && !description.endsWith('?') ? `${title} (${description})` : title;
  else if (description.endsWith('?')) text = description;
  else text = `Please give your ${lowerFirst(field.label).replace(/^your\s+/i, '')}${description ? ` (${description.replace(/\.$/, '')})` : ''}.`;
  const hint = (() => {
    switch (field.kind) {
      case 'boolean':
        return 'Answer yes or no.';
      case 'enum':
        return `Choose one of: ${choices(field).join(', ')}.`;
      case 'date':
        return 'A date such as 2026-11-22.';
      case 'array':
        return 'Separate several answers with commas.';
      default:
        return '';
    }
  })();
  const skip = field.required ? '' : 'You can answer "skip" to leave this out.';
  return [text, hint, skip].filter(Boolean).join(' ');
}
