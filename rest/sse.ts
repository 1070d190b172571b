/**
 * The server-sent events wire format of the REST streams (see docs/reference.md):
 *   event: answer             data: a text fragment (a fragment with newlines spans several data: lines)
 *   event: endpoint_response  data: a fragment of the final JSON; concatenated they parse
 *   event: metadata           data: JSON state (forms)
 *   data: [DONE]              the end
 *   data: [ERROR]<message>    an error, then the end
 */

export interface SseFrame {
  event: string | null;
  data: string;
}

/** The JSON of the final response is sent in pieces of at most this many characters. */
const RESPONSE_PIECE = 16_384;

export function encodeFrame({ event, data }: SseFrame): string {
  const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join('');
  return `${event ? `event: ${event}\n` : ''}${lines}\n`;
}

export function responseFrames(event: string, value: unknown): SseFrame[] {
  const json = JSON.stringify(value);
  const frames: SseFrame[] = [];
  for (let i = 0; i < json.length; i += RESPONSE_PIECE) frames.push({ event, data: json.slice(i, i + RESPONSE_PIECE) });
  return frames;
}

export const DONE: SseFrame = { event: null, data: '[DONE]' };
export const errorFrame = (message: string): SseFrame => ({ event: null, data: `[ERROR]${message.replace(/\s+/g, ' ')}` });
export const HEARTBEAT = ': ping\n\n';
