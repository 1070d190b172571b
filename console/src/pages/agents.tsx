import { useState } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import type { AgentListQuery } from '../gql/graphql.ts';
import { request } from '../graphql.ts';
import { navigate } from '../router.ts';
import { FieldError, fieldProps, FormError, PagedTable, problemOf, usePages, type Problem } from '../ui.tsx';
import { MODEL_LABELS } from './agent.tsx';

const AgentListDocument = graphql(`
  query AgentList($after: String) {
    agents(first: 50, after: $after) {
      nodes {
        id
        name
        handle
        visibility
        modelName
      }
      pageInfo {
        endCursor
        hasNextPage
      }
    }
  }
`);

const CreateAgentDocument = graphql(`
  mutation CreateAgent($input: CreateAgentInput!) {
    createAgent(input: $input) {
      id
    }
  }
`);

type AgentRow = AgentListQuery['agents']['nodes'][number];

/** `/agents`: the organization's agents, newest first, and a new one by name (edited on its own page). */
export function AgentsPage() {
  const pages = usePages<AgentRow>(async (after) => (await request(AgentListDocument, { after })).agents);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);

  async function create(event: SubmitEvent) {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget as HTMLFormElement).get('name'));
    setBusy(true);
    setProblem(null);
    try {
      const { createAgent } = await request(CreateAgentDocument, { input: { name } });
      navigate(`/agents/${createAgent.id}`);
    } catch (err) {
      setProblem(problemOf(err));
      setBusy(false);
    }
  }

  return (
    <>
      <section>
        <h1>Agents</h1>
        <form onSubmit={create} aria-labelledby="new-agent">
          <h2 id="new-agent">New agent</h2>
          <fieldset role="group">
            <input {...fieldProps(problem, 'name')} type="text" required maxLength={200} aria-label="Name" placeholder="Name" />
            <button type="submit" aria-busy={busy} disabled={busy}>
              Create agent
            </button>
          </fieldset>
          <FieldError problem={problem} field="name" />
          <FormError problem={problem} fields={['name']} />
        </form>
      </section>
      <section>
        <h2>All agents</h2>
        <PagedTable
          pages={pages}
          noun="agents"
          empty="No agents yet."
          columns={[
            { header: 'Name', cell: (a) => <a href={`#/agents/${a.id}`}>{a.name}</a> },
            { header: 'Handle', cell: (a) => (a.handle ? `@${a.handle}` : <span class="muted">—</span>) },
            { header: 'Visibility', cell: (a) => <span class="badge">{a.visibility}</span> },
            { header: 'Model', cell: (a) => MODEL_LABELS[a.modelName] },
          ]}
        />
      </section>
    </>
  );
}
