import type { Agent } from '../agents/agent.entity.ts';
import type { ChatTurn } from '../providers/chat.ts';
import type { Fragment } from '../retrieval/retrieval.service.ts';
import { PromptType } from '../vocabulary.ts';

export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant. Answer the question using the context from the knowledge base. If the context does not contain the answer, say that you do not know.';
const CUSTOMER_SUPPORT_PROMPT = 'You are a friendly customer support agent. Answer only from the context from the knowledge base; if it does not contain the answer, say so and offer to help otherwise.';

export interface PromptInput {
  query: string;
  systemPrompt?: string | null;
  userPrompt?: string | null;
  promptType?: PromptType | null;
  promptTemplate?: string | null;
}

/**
 * The messages sent to the model: the system prompt; earlier turns of the conversation; the
 * user prompt with {query} and {context} filled in. When the user prompt has no {context}
 * placeholder, the fragments go at the end of the system message.
 */
export function buildTurns(agent: Agent, input: PromptInput, fragments: Fragment[], history: { from: 'human' | 'agent'; text: string }[]): ChatTurn[] {
  const promptType = input.promptType ?? agent.promptType;
  const system = input.systemPrompt || agent.systemPrompt || (promptType === PromptType.customer_support ? CUSTOMER_SUPPORT_PROMPT : DEFAULT_SYSTEM_PROMPT);
  const template = input.userPrompt || agent.userPrompt || input.promptTemplate || agent.promptTemplate || '{query}';
  const context = fragments.length
    ? fragments.map((f, i) => `[${i + 1}] (${f.source}${f.page != null ? `, page ${f.page}` : ''})\n${f.text}`).join('\n\n')
    : '(no matching fragments)';
  const fill = (t: string) => t.replaceAll('{query}', input.query).replaceAll('{context}', context);
  const user = template.includes('{query}') || template.includes('{context}') ? fill(template) : `${fill(template)}\n\n${input.query}`;
  const systemText = template.includes('{context}') ? system : `${system}\n\nContext from the knowledge base:\n${context}`;
  return [
    { role: 'system', content: systemText },
    ...history.map((m): ChatTurn => ({ role: m.from === 'human' ? 'user' : 'assistant', content: m.text })),
    { role: 'user', content: user },
  ];
}
