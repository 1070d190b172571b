/**
 * LangChain's OpenAI client and its message classes, imported on first use rather than at
 * start-up: with `openai` and `@langchain/core` they are ~80 MB of resident memory, which a
 * service holds from its first model or embedding call on but not before (docs/operations.md#memory).
 * The first call pays the import once (a few hundred milliseconds).
 */
type OpenAi = typeof import('@langchain/openai');
type Messages = typeof import('@langchain/core/messages');
type Splitters = typeof import('@langchain/textsplitters');

let openAi: Promise<OpenAi> | undefined;
let messages: Promise<Messages> | undefined;
let splitters: Promise<Splitters> | undefined;

export const langchainOpenAi = (): Promise<OpenAi> => (openAi ??= import('@langchain/openai'));
export const langchainMessages = (): Promise<Messages> => (messages ??= import('@langchain/core/messages'));
export const langchainSplitters = (): Promise<Splitters> => (splitters ??= import('@langchain/textsplitters'));
