/**
 * What a chat model does for a form: read values out of a message (JSON, checked here and then
 * by ajv like any other value), and say the deterministic reply in natural words. Nothing the
 * model says changes the state of the form unless a value passes the property's schema.
 */
import type { ChatTurn } from '../providers/chat.ts';
import type { Extraction } from './form-turn.ts';
import type { FormField } from './form-schema.ts';

export const EXTRACTION_SYSTEM_PROMPT = [
  'You extract form values from a visitor message. Reply with one JSON object and nothing else:',
  '{"values": {"<field>": <value>, ...}, "skip": ["<field>", ...]}.',
  'Put in "values" only the fields the message actually answers (several at once is fine), each value',
  "following that field's JSON Schema: numbers as JSON numbers, yes/no as true/false, dates as YYYY-MM-DD,",
  'one of the listed enum values exactly. Put in "skip" the optional fields the visitor declines to answer.',
  'Never invent a value. When the message answers nothing, reply {"values": {}, "skip": []}.',
].join(' ');

export const PHRASING_SYSTEM_PROMPT = [
  'You are the assistant of an online form, chatting with a visitor. You are given the reply to send.',
  'Say it in a natural, friendly way, in the language of the visitor, in plain text and briefly.',
  'Keep its meaning: the same question, the same choices, the same reason when an answer was refused.',
  'Do not ask for anything else and do not add information.',
].join(' ');

export function extractionTurns(formName: string, open: FormField[], current: FormField, lastQuestion: string | null, message: string): ChatTurn[] {
  const fields = Object.fromEntries(open.map((f) => [f.name, { ...f.schema, required: f.required }]));
  return [
    { role: 'system', content: EXTRACTION_SYSTEM_PROMPT },
    {
      role: 'user',
      content: [
        `Form: ${formName}`,
        `Open fields (JSON Schema of each): ${JSON.stringify(fields)}`,
        `The visitor was asked about: ${current.name}${lastQuestion ? ` ("${lastQuestion}")` : ''}`,
        `Visitor message: ${message}`,
      ].join('\n'),
    },
  ];
}

export function phrasingTurns(formName: string, message: string, reply: string): ChatTurn[] {
  return [
    { role: 'system', content: PHRASING_SYSTEM_PROMPT },
    { role: 'user', content: `Form: ${formName}\nVisitor message: ${message}\nReply to send: ${reply}` },
  ];
}

/**
 * The model's JSON, or null when it is unusable (the deterministic reading is used instead).
 * Accepts the object alone or wrapped in prose or a code fence; a bare object of values is read
 * as `values`.
 */
export function parseExtraction(text: string): Extraction | null {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start === -1 || end <= start) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.slice(start, end + 1));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const obj = parsed as Record<string, unknown>;
  const hasShape = 'values' in obj || 'skip' in obj;
  const values = hasShape ? obj.values : obj;
  if (values !== undefined && (typeof values !== 'object' || values === null || Array.isArray(values))) return null;
  const skip = Array.isArray(obj.skip) ? obj.skip.filter((s): s is string => typeof s === 'string') : [];
  return { values: (values ?? {}) as Record<string, unknown>, skip };
}
