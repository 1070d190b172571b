import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { recordResponse } from './openapi-check.ts';

/** Reads a whole text/event-stream response with a standard SSE parser. */
export async function readSse(res: Response): Promise<EventSourceMessage[]> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  // Its event names and end marker are checked against the OpenAPI document (test/setup.ts).
  if (/^text\/event-stream\b/i.test(res.headers.get('content-type') ?? '')) recordResponse({ url: res.url, status: res.status, events: events.map(({ event, data }) => ({ event, data })) });
  return events;
}

/** The answer text, the endpoint_response JSON and what ended the stream. */
export function summarize(events: EventSourceMessage[]) {
  const answer = events.filter((e) => e.event === 'answer').map((e) => e.data).join('');
  const json = events.filter((e) => e.event === 'endpoint_response').map((e) => e.data).join('');
  const last = events.at(-1);
  return { answer, response: json ? JSON.parse(json) : null, last: last?.data, metadata: events.filter((e) => e.event === 'metadata').map((e) => JSON.parse(e.data)) };
}

/**
 * POSTs a streamed request, reads until the first `answer` frame, then leaves (aborts the request)
 * and waits until the model server has seen its call aborted. Throws if the stream ends first.
 */
export async function leaveAfterFirstAnswer(url: string, body: Record<string, unknown>, model: { aborted(): number; whenAborted(count?: number): Promise<void> }): Promise<void> {
  const left = new AbortController();
  const res = await fetch(url, { method: 'POST', signal: left.signal, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, streaming: true }) });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let seen = '';
  while (!seen.includes('event: answer')) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`The stream ended before its first answer frame: ${seen}`);
    seen += decoder.decode(value, { stream: true });
  }
  const aborted = model.aborted();
  left.abort();
  await model.whenAborted(aborted + 1);
}

/** The messages of a visitor's conversations, oldest first, as stored. */
export async function messagesOfVisitor(db: { execute(sql: string, params?: unknown[]): Promise<unknown> }, visitorId: string): Promise<{ from: string; text: string; metadata: any }[]> {
  return (await db.execute(`select m."from", m.text, m.metadata from messages m join conversations c on c.id = m.conversation_id where c.visitor_id = ? order by m.id`, [visitorId])) as { from: string; text: string; metadata: any }[];
}
