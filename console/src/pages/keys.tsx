import { useEffect, useState } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import type { ApiKeysQuery, CreateApiKeyInput } from '../gql/graphql.ts';
import { request } from '../graphql.ts';
import { allNodes, ConfirmDialog, CopyButton, Dialog, FieldError, fieldProps, FormError, problemOf, When, type Problem } from '../ui.tsx';

const ApiKeysDocument = graphql(`
  query ApiKeys {
    apiKeys {
      id
      name
      prefix
      createdAt
      lastUsedAt
      expiresAt
      revokedAt
      readOnly
      agentIds
      datastoreIds
    }
  }
`);

const KeyScopeChoicesDocument = graphql(`
  query KeyScopeChoices($agentsAfter: String, $datastoresAfter: String, $agents: Boolean!, $datastores: Boolean!) {
    agents(first: 100, after: $agentsAfter) @include(if: $agents) {
      nodes {
        id
        name
      }
      pageInfo {
        endCursor
        hasNextPage
      }
    }
    datastores(first: 100, after: $datastoresAfter) @include(if: $datastores) {
      nodes {
        id
        name
      }
      pageInfo {
        endCursor
        hasNextPage
      }
    }
  }
`);

const CreateApiKeyDocument = graphql(`
  mutation CreateApiKey($input: CreateApiKeyInput!) {
    createApiKey(input: $input) {
      id
      key
    }
  }
`);

const RevokeApiKeyDocument = graphql(`
  mutation RevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) {
      id
      revokedAt
    }
  }
`);

type Key = ApiKeysQuery['apiKeys'][number];
interface Named {
  id: string;
  name: string;
}

const KEY_FIELDS = ['name', 'agentIds', 'datastoreIds', 'readOnly', 'expiresAt'] as const;

async function loadChoices(): Promise<{ agents: Named[]; datastores: Named[] }> {
  const [agents, datastores] = await Promise.all([
    allNodes(async (after) => (await request(KeyScopeChoicesDocument, { agentsAfter: after, agents: true, datastores: false })).agents!),
    allNodes(async (after) => (await request(KeyScopeChoicesDocument, { datastoresAfter: after, agents: false, datastores: true })).datastores!),
  ]);
  return { agents, datastores };
}

/** `/keys`: create a key (shown once), list them, revoke one. */
export function KeysPage() {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [choices, setChoices] = useState<{ agents: Named[]; datastores: Named[] }>({ agents: [], datastores: [] });
  const [problem, setProblem] = useState<Problem | null>(null);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [revokeProblem, setRevokeProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const [limitAgents, setLimitAgents] = useState(false);
  const [limitDatastores, setLimitDatastores] = useState(false);

  const reload = () => request(ApiKeysDocument).then((r) => setKeys(r.apiKeys), (err) => setProblem(problemOf(err)));
  useEffect(() => {
    void reload();
    loadChoices().then(setChoices, (err) => setProblem(problemOf(err)));
  }, []);

  async function create(event: SubmitEvent) {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const expires = String(form.get('expiresAt') ?? '');
    const input: CreateApiKeyInput = {
      name: String(form.get('name')),
      readOnly: form.get('readOnly') === 'on',
      agentIds: limitAgents ? form.getAll('agentIds').map(String) : null,
      datastoreIds: limitDatastores ? form.getAll('datastoreIds').map(String) : null,
      // datetime-local is the reader's local time; the API wants an instant.
      expiresAt: expires ? new Date(expires).toISOString() : null,
    };
    setBusy(true);
    setProblem(null);
    try {
      const { createApiKey } = await request(CreateApiKeyDocument, { input });
      setCreated({ name: input.name.trim(), key: createApiKey.key });
      formElement.reset();
      setLimitAgents(false);
      setLimitDatastores(false);
      await reload();
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }

  async function revoke() {
    if (!revoking) return;
    setBusy(true);
    setRevokeProblem(null);
    try {
      await request(RevokeApiKeyDocument, { id: revoking.id });
      setRevoking(null);
      await reload();
    } catch (err) {
      setRevokeProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }

  const nameOf = (list: Named[], id: string) => list.find((x) => x.id === id)?.name ?? 'deleted';

  return (
    <>
      <section>
        <h1>API keys</h1>
        <p class="muted">A key acts for the organization from servers and scripts. It is shown once, when it is created; its limits never change (create another key and revoke the old one).</p>
        <form onSubmit={create} aria-labelledby="new-key">
          <h2 id="new-key">New key</h2>
          <label>
            Name
            <input {...fieldProps(problem, 'name')} type="text" required maxLength={100} placeholder="e.g. website widget" />
            <FieldError problem={problem} field="name" />
          </label>
          <fieldset>
            <legend>Agents</legend>
            <label>
              <input type="checkbox" role="switch" checked={limitAgents} onChange={(e) => setLimitAgents((e.currentTarget as HTMLInputElement).checked)} />
              Only some agents
            </label>
            {limitAgents && (
              <div class="checks">
                {choices.agents.length === 0 && <p class="muted">No agents yet: the key will reach none.</p>}
                {choices.agents.map((a) => (
                  <label key={a.id}>
                    <input type="checkbox" name="agentIds" value={a.id} />
                    {a.name}
                  </label>
                ))}
              </div>
            )}
            <FieldError problem={problem} field="agentIds" />
          </fieldset>
          <fieldset>
            <legend>Datastores</legend>
            <label>
              <input type="checkbox" role="switch" checked={limitDatastores} onChange={(e) => setLimitDatastores((e.currentTarget as HTMLInputElement).checked)} />
              Only some datastores
            </label>
            {limitDatastores && (
              <div class="checks">
                {choices.datastores.length === 0 && <p class="muted">No datastores yet: the key will reach none.</p>}
                {choices.datastores.map((d) => (
                  <label key={d.id}>
                    <input type="checkbox" name="datastoreIds" value={d.id} />
                    {d.name}
                  </label>
                ))}
              </div>
            )}
            <FieldError problem={problem} field="datastoreIds" />
          </fieldset>
          <fieldset>
            <label>
              <input {...fieldProps(problem, 'readOnly')} type="checkbox" />
              Read-only (queries, answers and reads only)
            </label>
            <FieldError problem={problem} field="readOnly" />
          </fieldset>
          <label>
            Expires (optional)
            <input {...fieldProps(problem, 'expiresAt')} type="datetime-local" />
            <FieldError problem={problem} field="expiresAt" />
          </label>
          <FormError problem={problem} fields={KEY_FIELDS} />
          <button type="submit" aria-busy={busy} disabled={busy}>
            Create key
          </button>
        </form>
      </section>

      <section>
        <h2>Keys</h2>
        {keys === null ? (
          <p aria-busy="true">Loading keys…</p>
        ) : keys.length === 0 ? (
          <p class="muted">No keys yet.</p>
        ) : (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Expires</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.map((k) => (
                  <tr key={k.id}>
                    <td>{k.name}</td>
                    <td>
                      <code>{k.prefix}…</code>
                    </td>
                    <td>
                      <When at={k.createdAt} />
                    </td>
                    <td>
                      <When at={k.lastUsedAt} never="never" />
                    </td>
                    <td>{scopeText(k, (id) => nameOf(choices.agents, id), (id) => nameOf(choices.datastores, id))}</td>
                    <td>
                      <When at={k.expiresAt} never="never" />
                    </td>
                    <td>
                      {k.revokedAt ? (
                        <span class="badge">
                          Revoked <When at={k.revokedAt} />
                        </span>
                      ) : (
                        <button type="button" class="danger outline" aria-label={`Revoke ${k.name}`} onClick={() => (setRevokeProblem(null), setRevoking(k))}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <Dialog open={created !== null} title="Your new API key" onClose={() => setCreated(null)}>
        {created && (
          <>
            <p role="alert">
              <strong>Copy this key now: it is shown only this once.</strong> Only its fingerprint is stored; if it is lost, create another key.
            </p>
            <label>
              Key “{created.name}”
              <input class="secret" type="text" readOnly value={created.key} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
            </label>
            <footer>
              <CopyButton text={created.key} />
              <button type="button" onClick={() => setCreated(null)}>
                Done
              </button>
            </footer>
          </>
        )}
      </Dialog>

      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        busy={busy}
        problem={revokeProblem}
        onConfirm={() => void revoke()}
        onCancel={() => setRevoking(null)}
      >
        <p>
          “{revoking?.name}” (<code>{revoking?.prefix}…</code>) stops working at once, everywhere it is used. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}

function scopeText(key: Key, agent: (id: string) => string, datastore: (id: string) => string): string {
  const parts: string[] = [];
  parts.push(key.agentIds ? (key.agentIds.length ? `agents: ${key.agentIds.map(agent).join(', ')}` : 'no agents') : 'all agents');
  parts.push(key.datastoreIds ? (key.datastoreIds.length ? `datastores: ${key.datastoreIds.map(datastore).join(', ')}` : 'no datastores') : 'all datastores');
  if (key.readOnly) parts.push('read-only');
  return parts.join('; ');
}
