import { useEffect, useState } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import type { AgentPageQuery, ModelName, UpdateAgentInput, Visibility } from '../gql/graphql.ts';
import { request } from '../graphql.ts';
import { navigate } from '../router.ts';
import { allNodes, ConfirmDialog, CopyButton, FieldError, fieldProps, FormError, problemOf, When, type Problem } from '../ui.tsx';

const AgentPageDocument = graphql(`
  query AgentPage($id: ID!) {
    agent(id: $id) {
      id
      name
      description
      handle
      modelName
      temperature
      visibility
      systemPrompt
      userPrompt
      allowedOrigins
      datastoreIds
      createdAt
      updatedAt
    }
  }
`);

const AgentDatastoresDocument = graphql(`
  query AgentDatastoreChoices($after: String) {
    datastores(first: 100, after: $after) {
      nodes {
        id
        name
        visibility
      }
      pageInfo {
        endCursor
        hasNextPage
      }
    }
  }
`);

const UpdateAgentDocument = graphql(`
  mutation UpdateAgent($id: ID!, $input: UpdateAgentInput!) {
    updateAgent(id: $id, input: $input) {
      id
      name
      description
      handle
      modelName
      temperature
      visibility
      systemPrompt
      userPrompt
      allowedOrigins
      datastoreIds
      createdAt
      updatedAt
    }
  }
`);

const DeleteAgentDocument = graphql(`
  mutation DeleteAgent($id: ID!) {
    deleteAgent(id: $id) {
      id
    }
  }
`);

type Agent = AgentPageQuery['agent'];

/** What the model tiers are called on screen; each maps to a model id configured on the service. */
export const MODEL_LABELS: Record<ModelName, string> = {
  model_3_5_turbo: 'Standard (model_3_5_turbo)',
  model_3_5_turbo_16k: 'Standard, long context (model_3_5_turbo_16k)',
  model_4: 'Advanced (model_4)',
  model_4_32k: 'Advanced, long context (model_4_32k)',
};

const FIELDS = ['name', 'description', 'handle', 'modelName', 'temperature', 'visibility', 'systemPrompt', 'userPrompt', 'allowedOrigins', 'datastoreIds'] as const;

/** `/agents/:id`: every field of the agent, its public chat link and widget snippet, and delete. */
export function AgentPage({ params }: { params: Record<string, string> }) {
  const id = params.id!;
  const [agent, setAgent] = useState<Agent | null>(null);
  const [datastores, setDatastores] = useState<{ id: string; name: string; visibility: Visibility }[]>([]);
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [deleteProblem, setDeleteProblem] = useState<Problem | null>(null);

  useEffect(() => {
    setAgent(null);
    request(AgentPageDocument, { id }).then((r) => setAgent(r.agent), (err) => setLoadProblem(problemOf(err)));
    allNodes(async (after) => (await request(AgentDatastoresDocument, { after })).datastores).then(setDatastores, (err) => setLoadProblem(problemOf(err)));
  }, [id]);

  async function save(event: SubmitEvent) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '');
    const handle = text('handle').trim();
    const input: UpdateAgentInput = {
      name: text('name'),
      description: text('description'),
      handle: handle || null,
      modelName: text('modelName') as ModelName,
      temperature: Number(text('temperature')),
      visibility: text('visibility') as Visibility,
      systemPrompt: text('systemPrompt'),
      userPrompt: text('userPrompt'),
      allowedOrigins: text('allowedOrigins')
        .split(/\s+/)
        .filter(Boolean),
      datastoreIds: form.getAll('datastoreIds').map(String),
    };
    setBusy(true);
    setProblem(null);
    setSaved(false);
    try {
      setAgent((await request(UpdateAgentDocument, { id, input })).updateAgent);
      setSaved(true);
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    setBusy(true);
    setDeleteProblem(null);
    try {
      await request(DeleteAgentDocument, { id });
      setDeleting(false);
      navigate('/agents');
    } catch (err) {
      setDeleteProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }

  if (!agent) {
    return (
      <section aria-busy={!loadProblem}>
        <h1>Agent</h1>
        <FormError problem={loadProblem} fields={[]} />
        <p>
          <a href="#/agents">All agents</a>
        </p>
      </section>
    );
  }

  const p = (name: (typeof FIELDS)[number]) => fieldProps(problem, name);
  return (
    <>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href="#/agents">Agents</a>
          </li>
          <li>{agent.name}</li>
        </ul>
      </nav>
      <section>
        <h1>{agent.name}</h1>
        <p class="muted">
          Created <When at={agent.createdAt} />, last changed <When at={agent.updatedAt} />.
        </p>
        {/* Keyed by the saved record: after a save the fields show what the server stored. */}
        <form key={agent.updatedAt} onSubmit={save} aria-label="Agent settings">
          <label>
            Name
            <input {...p('name')} type="text" required maxLength={200} defaultValue={agent.name} />
            <FieldError problem={problem} field="name" />
          </label>
          <label>
            Description
            <textarea {...p('description')} rows={2} maxLength={2000} defaultValue={agent.description} />
            <FieldError problem={problem} field="description" />
          </label>
          <label>
            Handle
            <input {...p('handle')} type="text" defaultValue={agent.handle ?? ''} placeholder="e.g. support" aria-describedby={problem?.field === 'handle' ? 'field-handle-error' : 'handle-help'} />
            <small id="handle-help">3 to 40 of a-z, 0-9, “_” and “-”; the agent is then “@handle”. Empty: no handle.</small>
            <FieldError problem={problem} field="handle" />
          </label>
          <div class="grid">
            <label>
              Model
              <select {...p('modelName')}>
                {Object.entries(MODEL_LABELS).map(([value, label]) => (
                  <option key={value} value={value} selected={value === agent.modelName}>
                    {label}
                  </option>
                ))}
              </select>
              <FieldError problem={problem} field="modelName" />
            </label>
            <label>
              Temperature
              <input {...p('temperature')} type="number" min={0} max={1} step={0.05} required defaultValue={String(agent.temperature)} />
              <FieldError problem={problem} field="temperature" />
            </label>
            <label>
              Visibility
              <select {...p('visibility')}>
                <option value="private" selected={agent.visibility === 'private'}>
                  Private: its organization only
                </option>
                <option value="public" selected={agent.visibility === 'public'}>
                  Public: anyone may chat with it
                </option>
              </select>
              <FieldError problem={problem} field="visibility" />
            </label>
          </div>
          <label>
            System prompt
            <textarea {...p('systemPrompt')} rows={5} defaultValue={agent.systemPrompt} />
            <FieldError problem={problem} field="systemPrompt" />
          </label>
          <label>
            User prompt
            <textarea {...p('userPrompt')} rows={3} defaultValue={agent.userPrompt} aria-describedby={problem?.field === 'userPrompt' ? 'field-userPrompt-error' : 'user-prompt-help'} />
            <small id="user-prompt-help">
              <code>{'{query}'}</code> is the question and <code>{'{context}'}</code> the fragments found; without <code>{'{context}'}</code> they go to the system message.
            </small>
            <FieldError problem={problem} field="userPrompt" />
          </label>
          <label>
            Allowed origins
            <textarea
              {...p('allowedOrigins')}
              rows={3}
              defaultValue={agent.allowedOrigins.join('\n')}
              placeholder="https://www.example.com"
              aria-describedby={problem?.field === 'allowedOrigins' ? 'field-allowedOrigins-error' : 'origins-help'}
            />
            <small id="origins-help">One origin a line (scheme://host[:port]): the web sites whose pages may talk to this agent. Empty: any site.</small>
            <FieldError problem={problem} field="allowedOrigins" />
          </label>
          <fieldset>
            <legend>Datastores it answers from</legend>
            {datastores.length === 0 && <p class="muted">The organization has no datastores yet.</p>}
            <div class="checks">
              {datastores.map((d) => (
                <label key={d.id}>
                  <input type="checkbox" name="datastoreIds" value={d.id} defaultChecked={agent.datastoreIds.includes(d.id)} />
                  {d.name}
                </label>
              ))}
            </div>
            <FieldError problem={problem} field="datastoreIds" />
          </fieldset>
          <FormError problem={problem} fields={FIELDS} />
          <div class="actions">
            <button type="submit" aria-busy={busy} disabled={busy}>
              Save
            </button>
            <span role="status" class="muted">
              {saved ? 'Saved.' : ''}
            </span>
          </div>
        </form>
      </section>

      <Share agent={agent} />

      <section>
        <h2>Delete</h2>
        <p class="muted">Its conversations go with it.</p>
        <button type="button" class="danger" onClick={() => (setDeleteProblem(null), setDeleting(true))}>
          Delete agent
        </button>
      </section>
      <ConfirmDialog
        open={deleting}
        title="Delete this agent?"
        confirmLabel="Delete"
        busy={busy}
        problem={deleteProblem}
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(false)}
      >
        <p>“{agent.name}” and its conversations are deleted; its chat page and widgets stop working. This cannot be undone.</p>
      </ConfirmDialog>
    </>
  );
}

/** A public agent with a handle: its chat page and the tag that puts its widget on a site. */
function Share({ agent }: { agent: Agent }) {
  if (agent.visibility !== 'public' || !agent.handle) {
    return (
      <section>
        <h2>Share</h2>
        <p class="muted">A public agent with a handle gets a chat page and a widget for web sites. Make it public and give it a handle to share it.</p>
      </section>
    );
  }
  const chat = `${location.origin}/chat/@${agent.handle}`;
  const snippet = `<script src="${location.origin}/widget.js" data-agent="@${agent.handle}" defer></script>`;
  return (
    <section>
      <h2>Share</h2>
      <p>
        Public chat page: <a href={chat}>{chat}</a>
      </p>
      <p id="snippet-help">Paste this tag into a web page to add a chat bubble for this agent:</p>
      <pre class="snippet" aria-describedby="snippet-help">
        <code>{snippet}</code>
      </pre>
      <CopyButton text={snippet} />
    </section>
  );
}
