/**
 * The embedded default answerer, used when no chat model is configured. It is not a language
 * model and says so: it quotes the passages of the knowledge base that best match the question.
 */
import type { Fragment } from '../retrieval/retrieval.service.ts';

const QUOTES = 3;
const QUOTE_CHARS = 600;

export const NO_DATASTORE_ANSWER = 'This agent has no knowledge to answer from: no datastore is linked to it yet.';
export const NOTHING_FOUND_ANSWER = 'I found nothing about this in the knowledge base.';

export function extractiveAnswer(fragments: Fragment[], hasKnowledge: boolean): string {
  if (!hasKnowledge) return NO_DATASTORE_ANSWER;
  if (!fragments.length) return NOTHING_FOUND_ANSWER;
  const quotes = fragments.slice(0, QUOTES).map((f, i) => {
    const text = f.text.length > QUOTE_CHARS ? `${f.text.slice(0, QUOTE_CHARS).replace(/\s+\S*$/, '')}…` : f.text;
    return `${i + 1}. "${text.replace(/\s+/g, ' ').trim()}" (${f.source}${f.page != null ? `, page ${f.page}` : ''})`;
  });
  return `No language model is configured, so here are the passages of the knowledge base that best match your question:\n\n${quotes.join('\n\n')}`;
}

/** Splits text into small pieces (a few words each) so the answer streams like a model's. */
export function* pieces(text: string, wordsPerPiece = 4): Generator<string> {
  const tokens = text.match(/\S+\s*|\s+/g) ?? [];
  for (let i = 0; i < tokens.length; i += wordsPerPiece) yield tokens.slice(i, i + wordsPerPiece).join('');
}
