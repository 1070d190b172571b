/**
 * The conversations inbox (`/#/conversations`): the organization's conversations newest first,
 * filtered by agent, visitor and date; `/#/conversations/:id` reads one with its sources.
 */
import { useEffect, useState } from 'preact/hooks';
import { Sources } from '../chat/chat.tsx';
import '../chat/chat.css';
import { PagedTable, usePages } from '../ui.tsx';
import { graphql } from '../gql/index.ts';
import type { ConversationsQuery, ConversationFilter } from '../gql/graphql.ts';
import { request } from '../graphql.ts';
import { PlaygroundAgentsDocument } from './playground.tsx';

const ConversationsDocument = graphql(`
  query Conversations($filter: ConversationFilter, $after: String) {
    conversations(filter: $filter, first: 20, after: $after) {
      nodes { id agentId formId visitorId channel createdAt updatedAt messageCount }
      pageInfo { endCursor hasNextPage }
    }
  }
`);

const ConversationDocument = graphql(`
  query ConversationMessages($id: ID!) {
    conversation(id: $id) {
      id agentId visitorId channel createdAt
      messages(first: 100) { nodes { id from text sources metadata createdAt } pageInfo { hasNextPage } }
    }
  }
`);

type Row = ConversationsQuery['conversations']['nodes'][number];

const when = (iso: string) => new Date(iso).toLocaleString();

function useAgentNames(): Map<string, string> {
  const [names, setNames] = useState(new Map<string, string>());
  useEffect(() => {
    request(PlaygroundAgentsDocument).then(
      ({ agents }) => setNames(new Map(agents.nodes.map((a) => [a.id, a.name]))),
      () => undefined,
    );
  }, []);
  return names;
}

/** A date input's day as the start (or end) of that day, local time. */
function dayBound(value: string, end: boolean): string | undefined {
  if (!value) return undefined;
  const date = new Date(`${value}T${end ? '23:59:59.999' : '00:00:00'}`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function Conversations() {
  const names = useAgentNames();
  const [agentId, setAgentId] = useState('');
  const [visitorId, setVisitorId] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');

  const filter = (): ConversationFilter => ({
    ...(agentId ? { agentId } : {}),
    ...(visitorId.trim() ? { visitorId: visitorId.trim() } : {}),
    ...(dayBound(from, false) ? { from: dayBound(from, false) } : {}),
    ...(dayBound(to, true) ? { to: dayBound(to, true) } : {}),
  });

  const pages = usePages<Row>(async (after) => (await request(ConversationsDocument, { filter: filter(), after })).conversations, [agentId, from, to]);

  return (
    <section>
      <h1>Conversations</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void pages.reload();
        }}
      >
        <div class="grid">
          <div>
            <label for="filter-agent">Agent</label>
            <select id="filter-agent" value={agentId} onChange={(e) => setAgentId(e.currentTarget.value)}>
              <option value="">All agents</option>
              {[...names].map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
            </select>
          </div>
          <label>
            Visitor
            <input value={visitorId} onInput={(e) => setVisitorId(e.currentTarget.value)} placeholder="visitor id" />
          </label>
          <label>
            From
            <input type="date" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
          </label>
          <label>
            To
            <input type="date" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
          </label>
        </div>
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>
      <PagedTable
        pages={pages}
        noun="conversations"
        empty="No conversation matches."
        columns={[
          { header: 'Started', cell: (c) => <a href={`#/conversations/${c.id}`}>{when(c.createdAt)}</a> },
          { header: 'Agent', cell: (c) => (c.agentId ? (names.get(c.agentId) ?? c.agentId) : c.formId ? 'a form' : '') },
          { header: 'Visitor', cell: (c) => c.visitorId },
          { header: 'Channel', cell: (c) => c.channel },
          { header: 'Messages', cell: (c) => c.messageCount },
          { header: 'Last message', cell: (c) => when(c.updatedAt) },
        ]}
      />
    </section>
  );
}

type Conversation = Awaited<ReturnType<typeof loadConversation>>;
const loadConversation = async (id: string) => (await request(ConversationDocument, { id })).conversation;

export function ConversationView({ params }: { params: Record<string, string> }) {
  const names = useAgentNames();
  const [conversation, setConversation] = useState<Conversation | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    loadConversation(params.id!).then(setConversation, (err: Error) => setError(err.message));
  }, [params.id]);

  return (
    <section>
      <p>
        <a href="#/conversations">All conversations</a>
      </p>
      <h1>Conversation</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {!conversation && !error && <p aria-busy="true">Loading…</p>}
      {conversation && (
        <>
          <p class="muted">
            {conversation.agentId ? `With ${names.get(conversation.agentId) ?? conversation.agentId}` : 'With a form'} · visitor {conversation.visitorId} ·{' '}
            {conversation.channel} · started {when(conversation.createdAt)}
            {conversation.agentId && (
              <>
                {' · '}
                <a href={`#/playground/${conversation.agentId}`}>Open the agent in the playground</a>
              </>
            )}
          </p>
          <div role="log" aria-label="Messages" class="chat-log-full">
            {conversation.messages.nodes
              .slice()
              .reverse()
              .map((m) => (
                <article key={m.id} class={`chat-message chat-${m.from}`}>
                  <header>
                    <strong>{m.from === 'human' ? 'Visitor' : 'Agent'}</strong> <small class="muted">{when(m.createdAt)}</small>
                    {m.metadata?.incomplete === true && <span class="badge">Stopped</span>}
                  </header>
                  <p class="chat-text">{m.text}</p>
                  {m.sources.length > 0 && <Sources sources={m.sources.map((s) => ({ ...s, source: String(s.source ?? '') }))} consoleLinks />}
                </article>
              ))}
          </div>
          {conversation.messages.pageInfo.hasNextPage && <p class="muted">Only the last 100 messages are shown.</p>}
        </>
      )}
    </section>
  );
}
