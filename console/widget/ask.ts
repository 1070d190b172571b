/**
 * The service's REST calls the widget makes, from the host page straight to the service
 * (cross-origin; docs/browser.md): read the agent, read a conversation, ask with the answer
 * streamed as server-sent events. Always without credentials: the widget is a visitor even on a
 * page of the service's own origin, so the agent's allowed origins always apply to it.
 */
import { createParser } from 'eventsource-parser';

export interface Source {
  text?: string;
  source?: string | null;
  datasource_name?: string | null;
}

export interface AgentCard {
  id: string;
  name: string;
  description?: string;
}

export interface StoredMessage {
  from: 'human' | 'agent';
  text: string;
  sources: Source[];
}

export interface Answered {
  conversationId: string;
  visitorId: string;
  sources: Source[];
}

/** What the service refused, with its status (403: not on this site; 404: no such public agent). */
export class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const init: RequestInit = { credentials: 'omit', mode: 'cors' };

async function refusal(res: Response): Promise<Refused> {
  let message = `The service answered ${res.status}.`;
  try {
    message = ((await res.json()) as { error?: { message?: string } }).error?.message ?? message;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  if (res.status === 429) message = `Too many questions: try again in ${res.headers.get('retry-after') ?? 'a few'} seconds.`;
  return new Refused(res.status, message);
}

export async function getAgent(api: string, ref: string): Promise<AgentCard> {
  const res = await fetch(`${api}/agents/${encodeURIComponent(ref)}`, init);
  if (!res.ok) throw await refusal(res);
  return (await res.json()) as AgentCard;
}

/** The last messages of a conversation, oldest first; null when it is gone. */
export async function getConversation(api: string, id: string): Promise<StoredMessage[] | null> {
  const res = await fetch(`${api}/conversations/${encodeURIComponent(id)}?limit=50`, init);
  if (res.status === 404) return null;
  if (!res.ok) throw await refusal(res);
  const body = (await res.json()) as { messages: StoredMessage[] };
  return body.messages.reverse();
}

/**
 * Asks and calls `onText` with each fragment of the answer as the model produces it. Rejects with
 * Refused when the service says no before the stream, TypeError when the browser got no answer
 * (offline, or a preflight the agent's allowed origins refused), Error for a stream error.
 */
export async function ask(
  api: string,
  agentId: string,
  body: { query: string; conversationId?: string; visitorId?: string },
  onText: (text: string) => void,
): Promise<Answered> {
  const res = await fetch(`${api}/agents/${encodeURIComponent(agentId)}/query`, {
    ...init,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, streaming: true }),
  });
  if (!res.ok) throw await refusal(res);
  let json = '';
  let finished = false;
  let failure: string | null = null;
  const parser = createParser({
    onEvent(event) {
      if (event.event === 'answer') onText(event.data);
      else if (event.event === 'endpoint_response') json += event.data;
      else if (event.data === '[DONE]') finished = true;
      else if (event.data.startsWith('[ERROR]')) failure = event.data.slice(7) || 'The answer failed.';
    },
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  while (!finished && failure === null) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
  void reader.cancel().catch(() => {});
  if (failure !== null) throw new Error(failure);
  if (!finished) throw new Error('The answer was cut off: ask again.');
  return JSON.parse(json) as Answered;
}
