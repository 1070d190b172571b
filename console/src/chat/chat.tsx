/**
 * The chat with an agent, shared by the playground and the public chat page: the answer streams
 * in over graphql-sse (`agentQueryStream`) as the model produces it, its sources are listed under
 * it, the conversation continues with its id, and Stop ends the stream, which ends the model call
 * on the server (a stream nobody reads is cancelled there).
 */
import './chat.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import type { AgentQueryInput } from '../gql/graphql.ts';
import { GraphQLRequestError, request, subscribe } from '../graphql.ts';

const ChatStreamDocument = graphql(`
  subscription ChatStream($id: ID!, $input: AgentQueryInput!) {
    agentQueryStream(id: $id, input: $input) {
      type
      text
      response {
        conversationId
        visitorId
        messageId
        sources { source datasource_id datasource_name page score text }
      }
    }
  }
`);

const ChatHistoryDocument = graphql(`
  query ChatHistory($id: ID!) {
    conversation(id: $id) {
      id
      visitorId
      messages(first: 100) { nodes { id from text sources } }
    }
  }
`);

/** A fragment an answer was built from (QueryResult, or a stored message's JSON of it). */
export interface Source {
  source: string;
  datasource_id?: string;
  datasource_name?: string;
  page?: number | null;
  text?: string;
}

export interface ChatMessage {
  from: 'human' | 'agent';
  text: string;
  sources: Source[];
  state: 'streaming' | 'done' | 'stopped' | 'failed';
}

export interface ChatProps {
  /** Agent id or "@handle". */
  agent: string;
  /** Input for the next question only, on top of the message (the playground's parameters). */
  parameters?: () => Partial<AgentQueryInput>;
  /** localStorage key keeping the conversation across page loads; absent: kept in memory only. */
  storageKey?: string;
  /** Datasource names link to the console's datasource page (signed-in console only). */
  consoleLinks?: boolean;
  /** Told of every new conversation id. */
  onConversation?: (id: string) => void;
}

interface Kept {
  conversationId: string;
  visitorId: string;
}

function readKept(key: string | undefined): Kept | null {
  if (!key) return null;
  try {
    const kept = JSON.parse(localStorage.getItem(key) ?? 'null') as Kept | null;
    return kept && typeof kept.conversationId === 'string' && typeof kept.visitorId === 'string' ? kept : null;
  } catch {
    // Storage blocked (a sandboxed frame): the conversation lives as long as the page.
    return null;
  }
}

function writeKept(key: string | undefined, kept: Kept | null): void {
  if (!key) return;
  try {
    if (kept) localStorage.setItem(key, JSON.stringify(kept));
    else localStorage.removeItem(key);
  } catch {
    /* as in readKept */
  }
}

function asSource(value: Record<string, unknown>): Source {
  return {
    source: String(value.source ?? ''),
    datasource_id: typeof value.datasource_id === 'string' ? value.datasource_id : undefined,
    datasource_name: typeof value.datasource_name === 'string' ? value.datasource_name : undefined,
    page: typeof value.page === 'number' ? value.page : null,
    text: typeof value.text === 'string' ? value.text : undefined,
  };
}

export function Chat({ agent, parameters, storageKey, consoleLinks, onConversation }: ChatProps) {
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [kept, setKept] = useState<Kept | null>(() => readKept(storageKey));
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [streaming, setStreaming] = useState(false);
  const stopRef = useRef<(() => void) | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const logRef = useRef<HTMLDivElement>(null);

  // The newest words stay in view as they arrive.
  useEffect(() => {
    const log = logRef.current;
    if (log) log.scrollTop = log.scrollHeight;
  }, [messages]);

  // A kept conversation (the public page after a reload) shows what was said so far.
  useEffect(() => {
    const start = readKept(storageKey);
    if (!start) return;
    request(ChatHistoryDocument, { id: start.conversationId })
      .then(({ conversation }) => {
        setMessages(
          conversation.messages.nodes
            .slice()
            .reverse()
            .map((m) => ({ from: m.from, text: m.text, sources: m.sources.map(asSource), state: 'done' as const })),
        );
      })
      .catch((err: unknown) => {
        if (err instanceof GraphQLRequestError && err.code === 'NOT_FOUND') {
          writeKept(storageKey, null);
          setKept(null);
        } else setError(err instanceof Error ? err.message : String(err));
      });
    return () => stopRef.current?.();
  }, [storageKey]);

  function update(change: (last: ChatMessage) => ChatMessage) {
    setMessages((all) => [...all.slice(0, -1), change(all.at(-1)!)]);
  }

  function finish() {
    stopRef.current = null;
    setStreaming(false);
    inputRef.current?.focus();
  }

  function send(event: Event) {
    event.preventDefault();
    const query = draft.trim();
    if (!query || streaming) return;
    setError(null);
    setDraft('');
    setMessages((all) => [...all, { from: 'human', text: query, sources: [], state: 'done' }, { from: 'agent', text: '', sources: [], state: 'streaming' }]);
    setStreaming(true);
    const input: AgentQueryInput = { ...(parameters?.() ?? {}), query, ...(kept ? { conversationId: kept.conversationId, visitorId: kept.visitorId } : {}) };
    stopRef.current = subscribe(ChatStreamDocument, { id: agent, input }, {
      next: ({ agentQueryStream: event }) => {
        if (event.type === 'answer' && event.text) update((m) => ({ ...m, text: m.text + event.text }));
        else if (event.response) {
          const { conversationId, visitorId, sources } = event.response;
          update((m) => ({ ...m, sources, state: 'done' }));
          const next = { conversationId, visitorId };
          if (conversationId !== kept?.conversationId) onConversation?.(conversationId);
          setKept(next);
          writeKept(storageKey, next);
        }
      },
      error: (err) => {
        update((m) => ({ ...m, state: 'failed' }));
        setError(err.message);
        finish();
      },
      complete: () => {
        update((m) => (m.state === 'streaming' ? { ...m, state: 'done' } : m));
        finish();
      },
    });
  }

  function stop() {
    stopRef.current?.();
    update((m) => ({ ...m, state: 'stopped' }));
    finish();
  }

  function restart() {
    stopRef.current?.();
    setMessages([]);
    setKept(null);
    setError(null);
    writeKept(storageKey, null);
    setStreaming(false);
  }

  return (
    <section class="chat" aria-label="Chat">
      <div ref={logRef} class="chat-log" role="log" aria-live="polite" aria-label="Conversation">
        {messages.length === 0 && <p class="muted">Ask something to start.</p>}
        {messages.map((m, i) => (
          <ChatEntry key={i} message={m} consoleLinks={consoleLinks} />
        ))}
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <form onSubmit={send}>
        <label for="chat-message">Message</label>
        <fieldset role="group">
          <input ref={inputRef} id="chat-message" name="message" autocomplete="off" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
          {streaming ? (
            <button type="button" class="secondary" onClick={stop}>
              Stop
            </button>
          ) : (
            <button type="submit" disabled={!draft.trim()}>
              Send
            </button>
          )}
        </fieldset>
      </form>
      {kept && !streaming && (
        <button type="button" class="outline secondary" onClick={restart}>
          New conversation
        </button>
      )}
    </section>
  );
}

function ChatEntry({ message, consoleLinks }: { message: ChatMessage; consoleLinks?: boolean }) {
  return (
    <article class={`chat-message chat-${message.from}`} aria-busy={message.state === 'streaming' ? 'true' : undefined}>
      <header>
        <strong>{message.from === 'human' ? 'You' : 'Agent'}</strong>
        {message.state === 'stopped' && <span class="badge">Stopped</span>}
        {message.state === 'failed' && <span class="badge">Failed</span>}
      </header>
      <p class="chat-text">{message.text}</p>
      {message.sources.length > 0 && <Sources sources={message.sources} consoleLinks={consoleLinks} />}
    </article>
  );
}

/** Links for web pages; a file's name, linking to its datasource in the console when signed in. */
export function Sources({ sources, consoleLinks }: { sources: Source[]; consoleLinks?: boolean }) {
  return (
    <footer class="chat-sources">
      <small>Sources</small>
      <ol>
        {sources.map((s, i) => {
          const label = `${s.source || s.datasource_name || 'source'}${s.page != null ? `, page ${s.page}` : ''}`;
          const web = /^https?:\/\//i.test(s.source);
          return (
            <li key={i}>
              {web ? (
                <a href={s.source} target="_blank" rel="noopener noreferrer">
                  {label}
                </a>
              ) : consoleLinks && s.datasource_id ? (
                <a href={`#/datasources/${encodeURIComponent(s.datasource_id)}`}>{label}</a>
              ) : (
                <span>{label}</span>
              )}
              {s.text && (
                <details>
                  <summary>Excerpt</summary>
                  <blockquote>{s.text}</blockquote>
                </details>
              )}
            </li>
          );
        })}
      </ol>
    </footer>
  );
}
