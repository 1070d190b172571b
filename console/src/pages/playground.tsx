/**
 * The playground (`/#/playground/:agentId`): chat with any agent of the organization, the answer
 * streamed as produced, with the request's parameters settable for the questions asked here
 * (the agent itself is not changed).
 */
import { useEffect, useState } from 'preact/hooks';
import { Chat } from '../chat/chat.tsx';
import { graphql } from '../gql/index.ts';
import type { AgentQueryInput, QueryModelName } from '../gql/graphql.ts';
import { request } from '../graphql.ts';
import { navigate } from '../router.ts';

export const PlaygroundAgentsDocument = graphql(`
  query PlaygroundAgents {
    agents(first: 100) { nodes { id name handle modelName temperature } }
  }
`);

const MODELS: QueryModelName[] = ['model_3_5_turbo', 'model_3_5_turbo_16k', 'model_4'];

type Agents = Awaited<ReturnType<typeof loadAgents>>;
const loadAgents = async () => (await request(PlaygroundAgentsDocument)).agents.nodes;

function ids(text: string): string[] | undefined {
  const list = text.split(/[\s,]+/).filter(Boolean);
  return list.length ? list : undefined;
}

export function Playground({ params }: { params: Record<string, string> }) {
  const [agents, setAgents] = useState<Agents | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [model, setModel] = useState('');
  const [temperature, setTemperature] = useState('');
  const [maxTokens, setMaxTokens] = useState('');
  const [datasourceIds, setDatasourceIds] = useState('');
  const [customIds, setCustomIds] = useState('');

  useEffect(() => {
    loadAgents().then(setAgents, (err: Error) => setError(err.message));
  }, []);

  const agentId = params.agentId ?? agents?.[0]?.id;
  const agent = agents?.find((a) => a.id === agentId);

  const parameters = (): Partial<AgentQueryInput> => {
    const filters = { datasource_ids: ids(datasourceIds), custom_ids: ids(customIds) };
    return {
      ...(model ? { modelName: model as QueryModelName } : {}),
      ...(temperature !== '' ? { temperature: Number(temperature) } : {}),
      ...(maxTokens !== '' ? { maxTokens: Number(maxTokens) } : {}),
      ...(filters.datasource_ids || filters.custom_ids ? { filters } : {}),
    };
  };

  return (
    <section>
      <h1>Playground</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {agents === null && !error && <p aria-busy="true">Loading agents…</p>}
      {agents?.length === 0 && (
        <p>
          No agent yet. <a href="#/agents">Create one</a> to chat with it.
        </p>
      )}
      {agents && agents.length > 0 && (
        <>
          <label for="playground-agent">Agent</label>
          <select id="playground-agent" value={agentId} onChange={(e) => navigate(`/playground/${e.currentTarget.value}`)}>
              {agents.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                  {a.handle ? ` (@${a.handle})` : ''}
                </option>
            ))}
          </select>
          {params.agentId && !agent && <p role="alert" class="error">This agent is not one of the organization's.</p>}
          <details>
            <summary>Parameters</summary>
            <p class="muted">For the questions asked here; empty fields keep the agent's own settings. The agent is not changed.</p>
            <div class="grid">
              <div>
                <label for="playground-model">Model</label>
                <select id="playground-model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
                  <option value="">The agent's ({agent?.modelName})</option>
                  {MODELS.map((m) => (
                    <option key={m} value={m}>
                      {m}
                    </option>
                  ))}
                </select>
              </div>
              <label>
                Temperature
                <input type="number" min="0" max="2" step="0.1" placeholder={String(agent?.temperature ?? '')} value={temperature} onInput={(e) => setTemperature(e.currentTarget.value)} />
              </label>
              <label>
                Max tokens
                <input type="number" min="1" step="1" value={maxTokens} onInput={(e) => setMaxTokens(e.currentTarget.value)} />
              </label>
            </div>
            <div class="grid">
              <label>
                Only datasources (ids)
                <input value={datasourceIds} onInput={(e) => setDatasourceIds(e.currentTarget.value)} placeholder="comma separated" />
              </label>
              <label>
                Only custom ids
                <input value={customIds} onInput={(e) => setCustomIds(e.currentTarget.value)} placeholder="comma separated" />
              </label>
            </div>
          </details>
          {agent && <Chat key={agent.id} agent={agent.id} parameters={parameters} consoleLinks />}
        </>
      )}
    </section>
  );
}
