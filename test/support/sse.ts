import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** Reads a whole text/event-stream response with a standard SSE parser. */
export async function readSse(res: Response): Promise<EventSourceMessage[]> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  return events;
}

/** The answer text, the endpoint_response JSON and what ended the stream. */
export function summarize(events: EventSourceMessage[]) {
  const answer = events.filter((e) => e.event === 'answer').map((e) => e.data).join('');
  const json = events.filter((e) => e.event === 'endpoint_response').map((e) => e.data).join('');
  const last = events.at(-1);
  return { answer, response: json ? JSON.parse(json) : null, last: last?.data, metadata: events.filter((e) => e.event === 'metadata').map((e) => JSON.parse(e.data)) };
}
