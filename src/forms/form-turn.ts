/**
 * One turn of a form conversation, as a pure function: the state before, the visitor's
 * message (and what a model extracted from it, if one did) -> the state after and what to say.
 * Every value that is kept has passed ajv against its property's schema.
 */
import { coerce, extractValue, isGreeting, isSkip, matchChoice, parseBoolean } from './extract.ts';
import { question, type CompiledForm, type FormField } from './form-schema.ts';

export interface FormState {
  values: Record<string, unknown>;
  skipped: string[];
  currentField: string | null;
}

/** What a model read in the message: values by property name, and optional properties declined. */
export interface Extraction {
  values: Record<string, unknown>;
  skip: string[];
}

export interface TurnResult extends FormState {
  completed: boolean;
  /** False when the message was refused as an answer to the field asked. */
  isValid: boolean;
  /** Why it was refused, in a sentence. */
  problem: string | null;
  /** Properties filled by this message. */
  accepted: string[];
  /** The deterministic reply (a model may rephrase it). */
  reply: string;
}

export const COMPLETED_REPLY = 'That is everything: your answers have been recorded. Thank you!';
export const ALREADY_COMPLETED_REPLY = 'This form is already complete, and your answers have been recorded. Thank you!';

/** The first field neither answered nor skipped, in form order (required ones first). */
export function nextField(form: CompiledForm, state: Pick<FormState, 'values' | 'skipped'>): FormField | null {
  return form.fields.find((f) => !Object.hasOwn(state.values, f.name) && !state.skipped.includes(f.name)) ?? null;
}

/**
 * Plays one message against the state. `first` is the conversation's opening message: it may
 * answer the first field, but when it does not (a greeting), nothing is refused.
 */
export function playTurn(form: CompiledForm, state: FormState, message: string, opts: { first: boolean; extraction?: Extraction | null }): TurnResult {
  const values = { ...state.values };
  const skipped = [...state.skipped];
  const accepted: string[] = [];
  let problem: string | null = null;
  const current = (state.currentField && !Object.hasOwn(values, state.currentField) && !skipped.includes(state.currentField) ? form.field(state.currentField) : null) ?? nextField(form, { values, skipped });

  if (current) {
    if (opts.extraction) problem = applyExtraction(form, current, values, skipped, accepted, opts.extraction, message, opts.first);
    else problem = readOne(form, current, values, skipped, accepted, message, opts.first);
  }

  const next = nextField(form, { values, skipped });
  const completed = next === null;
  const parts: string[] = [];
  if (accepted.length && !problem && !completed) parts.push('Thank you.');
  if (problem) parts.push(problem);
  parts.push(completed ? COMPLETED_REPLY : question(next));
  return { values, skipped, currentField: next?.name ?? null, completed, isValid: problem === null, problem, accepted, reply: parts.join(' ') };
}

/** The deterministic reading: the message answers the current field, or skips it. */
function readOne(form: CompiledForm, field: FormField, values: Record<string, unknown>, skipped: string[], accepted: string[], message: string, first: boolean): string | null {
  if (first && isGreeting(message)) return null;
  if (isSkip(message)) {
    // "no" answers a yes/no field, and a listed value answers an enum, before it skips anything.
    const asValue = field.kind === 'boolean' ? parseBoolean(message) : field.kind === 'enum' ? matchChoice(field, message) : undefined;
    if (asValue === undefined || asValue === null) {
      if (!field.required) {
        skipped.push(field.name);
        return null;
      }
      if (message.trim().toLowerCase().startsWith('skip')) return first ? null : `${field.label} is required, so it cannot be skipped.`;
    }
  }
  // A question is not an answer to a text field when it opens the conversation.
  if (first && field.kind === 'string' && message.trim().endsWith('?')) return null;
  const candidate = extractValue(field, message);
  if (candidate === undefined) return first ? null : `${field.label} cannot be empty.`;
  const error = form.check(field, candidate, values);
  if (error) return first ? null : error;
  values[field.name] = candidate;
  accepted.push(field.name);
  return null;
}

/** A model's reading: any open field may be filled at once; each value still goes through ajv. */
function applyExtraction(
  form: CompiledForm,
  current: FormField,
  values: Record<string, unknown>,
  skipped: string[],
  accepted: string[],
  extraction: Extraction,
  message: string,
  first: boolean,
): string | null {
  let problem: string | null = null;
  for (const field of form.fields) {
    if (Object.hasOwn(values, field.name) || skipped.includes(field.name) || !Object.hasOwn(extraction.values, field.name)) continue;
    const given = extraction.values[field.name];
    if (given === null || given === undefined || given === '') continue;
    const candidate = coerce(field, given);
    const error = form.check(field, candidate, values);
    if (!error) {
      values[field.name] = candidate;
      accepted.push(field.name);
    } else if (field.name === current.name && !first) problem = error;
  }
  for (const name of extraction.skip) {
    const field = form.field(name);
    if (!field || Object.hasOwn(values, name) || skipped.includes(name)) continue;
    if (!field.required) skipped.push(name);
    else if (name === current.name && !first && !problem) problem = `${field.label} is required, so it cannot be skipped.`;
  }
  if (problem || accepted.includes(current.name) || skipped.includes(current.name) || accepted.length || first) return problem;
  // Nothing usable in the message: what a person would say, and the same question again.
  if (!current.required && isSkip(message)) {
    skipped.push(current.name);
    return null;
  }
  return `I could not find your ${current.label.charAt(0).toLowerCase()}${current.label.slice(1)} in your message.`;
}

/** The reply when a message arrives after the form was completed. */
export function completedTurn(state: FormState): TurnResult {
  return { ...state, currentField: null, completed: true, isValid: true, problem: null, accepted: [], reply: ALREADY_COMPLETED_REPLY };
}
