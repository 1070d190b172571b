/**
 * The public chat page of a public agent, `/chat/@handle` or `/chat/{id}`, for anonymous
 * visitors: the agent's name and description and the chat, nothing of its organization. The
 * conversation is kept in this page's localStorage, so a reload continues it. A private or
 * unknown agent gets the same "not available" (the API answers NOT_FOUND for both).
 */
import '@picocss/pico/css/pico.min.css';
import '../style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Chat } from '../chat/chat.tsx';
import { graphql } from '../gql/index.ts';
import { request } from '../graphql.ts';

const PublicAgentDocument = graphql(`
  query PublicAgent($id: ID!) {
    agent(id: $id) { id name description }
  }
`);

type Agent = { id: string; name: string; description: string };

function agentOfPath(): string {
  const raw = location.pathname.replace(/^\/chat\//, '').replace(/\/$/, '');
  try {
    return decodeURIComponent(raw);
  } catch {
    return '';
  }
}

function ChatPage() {
  const [agent, setAgent] = useState<Agent | null | undefined>(undefined);
  useEffect(() => {
    const id = agentOfPath();
    if (!id) return setAgent(null);
    request(PublicAgentDocument, { id }).then(
      ({ agent: found }) => setAgent(found),
      () => setAgent(null),
    );
  }, []);
  useEffect(() => {
    document.title = agent ? agent.name : agent === null ? 'Not available' : 'Chat';
  }, [agent]);

  if (agent === undefined) return <main class="container" aria-busy="true" aria-label="Loading" />;
  if (agent === null) {
    return (
      <main class="container">
        <h1>Not available</h1>
        <p>This agent is not available.</p>
      </main>
    );
  }
  return (
    <main class="container">
      <h1>{agent.name}</h1>
      {agent.description && <p class="muted">{agent.description}</p>}
      <Chat agent={agent.id} storageKey={`agentbase.chat.${agent.id}`} />
    </main>
  );
}

render(<ChatPage />, document.getElementById('app')!);
