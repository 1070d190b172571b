import { useEffect, useRef, useState } from 'preact/hooks';
import '../data-ui/data.css';
import { ConfirmButton, FieldError, FormError, formatBytes, formatDate, invalidProps, problemOf, type Problem } from '../ui.tsx';
import { uploadFile } from '../data-ui/upload.ts';
import { graphql } from '../gql/index.ts';
import type { CreateDatasourceInput, DatastorePageQuery, DatasourceRowFragment, SearchDatastoreQuery, Visibility } from '../gql/graphql.ts';
import { request, subscribe } from '../graphql.ts';
import { navigate } from '../router.ts';

graphql(`
  fragment DatasourceRow on Datasource {
    id name type status chunkCount size errorMessage updatedAt
  }
`);

const DatastorePageDocument = graphql(`
  query DatastorePage($id: ID!) {
    datastore(id: $id) { id name description visibility uploadPath embeddingModel chunkSize chunkOverlap createdAt }
    datasources(datastoreId: $id, first: 100) {
      nodes { ...DatasourceRow }
      pageInfo { hasNextPage }
    }
    me { organization { crawlPageLimit } }
  }
`);

const DatasourceRowDocument = graphql(`
  query DatasourceRow($id: ID!) {
    datasource(id: $id) { ...DatasourceRow }
  }
`);

const StatusChangedDocument = graphql(`
  subscription DatasourceStatusChanged($datastoreId: ID!) {
    datasourceStatusChanged(datastoreId: $datastoreId) { id name type status chunkCount errorMessage at }
  }
`);

const UpdateDatastoreDocument = graphql(`
  mutation UpdateDatastore($id: ID!, $input: UpdateDatastoreInput!) {
    updateDatastore(id: $id, input: $input) { id name description visibility }
  }
`);

const DeleteDatastoreDocument = graphql(`
  mutation DeleteDatastore($id: ID!) {
    deleteDatastore(id: $id) { id }
  }
`);

const CreateDatasourceDocument = graphql(`
  mutation CreateDatasource($input: CreateDatasourceInput!) {
    createDatasource(input: $input) { ...DatasourceRow }
  }
`);

const ResyncDatasourceDocument = graphql(`
  mutation ResyncDatasource($id: ID!) {
    resyncDatasource(id: $id) { ...DatasourceRow }
  }
`);

const DeleteDatasourceDocument = graphql(`
  mutation DeleteDatasource($id: ID!) {
    deleteDatasource(id: $id) { id }
  }
`);

const SearchDatastoreDocument = graphql(`
  query SearchDatastore($id: ID!, $input: DatastoreQueryInput!) {
    datastoreQuery(id: $id, input: $input) { datasource_id datasource_name source page score text }
  }
`);

type Datastore = DatastorePageQuery['datastore'];
type Row = DatasourceRowFragment;

/** One datastore: its settings, what to add to it, its datasources live, and a search box. */
export function DatastorePage({ params }: { params: Record<string, string> }) {
  const id = params.id!;
  const [datastore, setDatastore] = useState<Datastore | null>(null);
  const [pageLimit, setPageLimit] = useState<number | null>(null);
  const [rows, setRows] = useState<Map<string, Row>>(new Map());
  const [more, setMore] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);

  // What the table shows now, for the subscription's handler (set up once per datastore).
  const shown = useRef(rows);
  shown.current = rows;

  /** Adds or replaces a row by id (an upload, a form, a change announced for a row not shown yet). */
  const upsert = (row: Row) => setRows((old) => new Map(old).set(row.id, row));
  const fetchRow = async (rowId: string) => {
    try {
      upsert((await request(DatasourceRowDocument, { id: rowId })).datasource);
    } catch {
      // Deleted in the meantime: the delete's own change removes it.
    }
  };

  useEffect(() => {
    let live = true;
    request(DatastorePageDocument, { id })
      .then((data) => {
        if (!live) return;
        setDatastore(data.datastore);
        setPageLimit(data.me.organization.crawlPageLimit);
        setRows(new Map(data.datasources.nodes.map((r) => [r.id, r])));
        setMore(data.datasources.pageInfo.hasNextPage);
      })
      .catch((err) => live && setProblem(problemOf(err)));
    // Live: every status change of this datastore's datasources, from whichever process made it.
    const stop = subscribe(StatusChangedDocument, { datastoreId: id }, {
      next: ({ datasourceStatusChanged: change }) => {
        const known = shown.current.has(change.id);
        setRows((old) => {
          const row = old.get(change.id);
          if (!row) return old;
          return new Map(old).set(change.id, { ...row, name: change.name, status: change.status, chunkCount: change.chunkCount, errorMessage: change.errorMessage ?? null, updatedAt: change.at });
        });
        // A row not shown yet (a page a site crawl found), or a settled one whose size changed: read it once.
        if (!known || change.status === 'synched') void fetchRow(change.id);
      },
      error: (err) => live && setProblem(problemOf(err)),
    });
    return () => {
      live = false;
      stop();
    };
  }, [id]);

  if (problem && !datastore)
    return (
      <section>
        <h1>Datastore</h1>
        <p role="alert" class="error">
          {problem.message}
        </p>
        <a href="#/datastores">All datastores</a>
      </section>
    );
  if (!datastore) return <p aria-busy="true">Loading the datastore…</p>;

  const sorted = [...rows.values()].sort((a, b) => (a.id < b.id ? 1 : -1));
  return (
    <section>
      <nav aria-label="Breadcrumb">
        <ul>
          <li>
            <a href="#/datastores">Datastores</a>
          </li>
          <li>{datastore.name}</li>
        </ul>
      </nav>
      <h1>{datastore.name}</h1>
      <p>
        {datastore.description || <span class="muted">No description.</span>} <span class="badge">{datastore.visibility}</span>
      </p>
      {problem && (
        <p role="alert" class="error">
          {problem.message}
        </p>
      )}
      <EditDatastore datastore={datastore} onSaved={(d) => setDatastore({ ...datastore, ...d })} />

      <h2>Add content</h2>
      <UploadFiles path={datastore.uploadPath} onUploaded={(rowId) => void fetchRow(rowId)} />
      <AddWebPage datastoreId={id} onAdded={upsert} />
      <AddWebSite datastoreId={id} pageLimit={pageLimit} onAdded={upsert} />
      <AddText datastoreId={id} onAdded={upsert} />

      <h2 id="datasources-heading">Datasources</h2>
      <p class="muted">Updated live as each one is processed.</p>
      {sorted.length === 0 ? (
        <p class="muted">Nothing in this datastore yet.</p>
      ) : (
        <div class="scroll">
          <table aria-labelledby="datasources-heading">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col">Chunks</th>
                <th scope="col">Size</th>
                <th scope="col">Error</th>
                <th scope="col">Updated</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {sorted.map((row) => (
                <DatasourceLine
                  key={row.id}
                  row={row}
                  onChanged={upsert}
                  onDeleted={() =>
                    setRows((old) => {
                      const next = new Map(old);
                      next.delete(row.id);
                      return next;
                    })
                  }
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {more && <p class="muted">Showing the newest 100 datasources.</p>}

      <Search datastoreId={id} />

      <h2>Delete</h2>
      <ConfirmButton
        label="Delete datastore"
        question={`Delete the datastore "${datastore.name}" with all its datasources and chunks? This cannot be undone.`}
        confirmLabel="Delete"
        class="danger"
        onConfirm={async () => {
          await request(DeleteDatastoreDocument, { id });
          navigate('/datastores');
        }}
      />
    </section>
  );
}

function DatasourceLine({ row, onChanged, onDeleted }: { row: Row; onChanged: (row: Row) => void; onDeleted: () => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  return (
    <tr>
      <td>
        <a href={`#/datasources/${row.id}`}>{row.name}</a>
      </td>
      <td>{row.type.replace('_', ' ')}</td>
      <td class={`status-${row.status}`}>{row.status}</td>
      <td>{row.chunkCount}</td>
      <td>{formatBytes(row.size)}</td>
      <td class="error">{row.errorMessage ?? ''}{problem && <span role="alert"> {problem.message}</span>}</td>
      <td>{formatDate(row.updatedAt)}</td>
      <td>
        <div class="row-actions">
          <button
            type="button"
            class="secondary outline"
            aria-label={`Re-sync ${row.name}`}
            onClick={() => {
              setProblem(null);
              request(ResyncDatasourceDocument, { id: row.id })
                .then((d) => onChanged(d.resyncDatasource))
                .catch((err) => setProblem(problemOf(err)));
            }}
          >
            Re-sync
          </button>
          <ConfirmButton
            label="Delete"
            accessibleLabel={`Delete ${row.name}`}
            question={`Delete "${row.name}" and its chunks?`}
            confirmLabel="Delete"
            onConfirm={async () => {
              await request(DeleteDatasourceDocument, { id: row.id });
              onDeleted();
            }}
          />
        </div>
      </td>
    </tr>
  );
}

function EditDatastore({ datastore, onSaved }: { datastore: Datastore; onSaved: (d: Pick<Datastore, 'name' | 'description' | 'visibility'>) => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  async function onSubmit(event: SubmitEvent) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setProblem(null);
    setSaved(false);
    try {
      const { updateDatastore } = await request(UpdateDatastoreDocument, {
        id: datastore.id,
        input: { name: String(form.get('name')).trim(), description: String(form.get('description')).trim(), visibility: String(form.get('visibility')) as Visibility },
      });
      onSaved(updateDatastore);
      setSaved(true);
    } catch (err) {
      setProblem(problemOf(err));
    }
  }
  return (
    <details>
      <summary>Edit datastore</summary>
      <form onSubmit={onSubmit}>
        <label>
          Name
          <input name="name" required defaultValue={datastore.name} {...invalidProps(problem, 'name', 'edit-name-error')} />
        </label>
        <FieldError problem={problem} field="name" id="edit-name-error" />
        <label>
          Description
          <input name="description" defaultValue={datastore.description} {...invalidProps(problem, 'description', 'edit-description-error')} />
        </label>
        <FieldError problem={problem} field="description" id="edit-description-error" />
        <label>
          Visibility
          <select name="visibility" defaultValue={datastore.visibility}>
            <option value="private">Private: the organization only</option>
            <option value="public">Public: anyone may search it</option>
          </select>
        </label>
        <FormError problem={problem} fields={['name', 'description']} id="edit-error" />
        {saved && <p role="status">Saved.</p>}
        <button type="submit">Save changes</button>
      </form>
    </details>
  );
}

interface Upload {
  key: number;
  name: string;
  sent: number;
  total: number;
  error: string | null;
  done: boolean;
}

/** Several files at once, dropped or chosen, each with its own progress bar. */
function UploadFiles({ path, onUploaded }: { path: string; onUploaded: (id: string) => void }) {
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const counter = useRef(0);

  function start(files: FileList | File[]) {
    for (const file of Array.from(files)) {
      const key = ++counter.current;
      const patch = (p: Partial<Upload>) => setUploads((old) => old.map((u) => (u.key === key ? { ...u, ...p } : u)));
      setUploads((old) => [...old, { key, name: file.name, sent: 0, total: file.size, error: null, done: false }]);
      uploadFile(path, file, (sent, total) => patch({ sent, total }))
        .then(({ id }) => {
          setUploads((old) => old.map((u) => (u.key === key ? { ...u, done: true, sent: u.total } : u)));
          onUploaded(id);
        })
        .catch((err: Error) => patch({ error: err.message }));
    }
    if (input.current) input.current.value = '';
  }

  return (
    <article>
      <h3>Upload files</h3>
      <div
        class={over ? 'dropzone over' : 'dropzone'}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (e.dataTransfer?.files.length) start(e.dataTransfer.files);
        }}
      >
        <p>Drop files here (PDF, Word, PowerPoint, Excel, text, Markdown, CSV, JSON), or choose them:</p>
        <label>
          Files to upload
          <input ref={input} type="file" multiple accept=".pdf,.docx,.pptx,.xlsx,.txt,.md,.markdown,.csv,.json" onChange={(e) => start((e.currentTarget as HTMLInputElement).files ?? [])} />
        </label>
      </div>
      {uploads.length > 0 && (
        <ul class="uploads" aria-label="Uploads">
          {uploads.map((u) => (
            <li key={u.key}>
              <label>
                {u.name}: {u.error ? 'failed' : u.done ? 'uploaded' : `${Math.round((u.sent / Math.max(u.total, 1)) * 100)}%`}
                <progress value={u.sent} max={Math.max(u.total, 1)} />
              </label>
              {u.error && (
                <p role="alert" class="error">
                  {u.name}: {u.error}
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
    </article>
  );
}

/** What the forms that create one datasource share: the call, its busy state and its problem. */
function useAdd(datastoreId: string, onAdded: (row: Row) => void) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  async function add(form: HTMLFormElement, input: Omit<CreateDatasourceInput, 'datastoreId'>) {
    setBusy(true);
    setProblem(null);
    try {
      const { createDatasource } = await request(CreateDatasourceDocument, { input: { ...input, datastoreId } });
      onAdded(createDatasource);
      form.reset();
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }
  return { problem, busy, add };
}

function AddWebPage({ datastoreId, onAdded }: { datastoreId: string; onAdded: (row: Row) => void }) {
  const { problem, busy, add } = useAdd(datastoreId, onAdded);
  return (
    <details>
      <summary>Add a web page</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const url = String(new FormData(form).get('url')).trim();
          void add(form, { type: 'web_page', config: { source_url: url } });
        }}
      >
        <label>
          Page URL
          <input name="url" type="url" required placeholder="https://www.example.com/about" {...invalidProps(problem, 'config.source_url', 'page-url-error')} />
        </label>
        <FieldError problem={problem} field="config.source_url" id="page-url-error" />
        <FormError problem={problem} fields={['config.source_url']} id="page-error" />
        <button type="submit" aria-busy={busy} disabled={busy}>
          Add web page
        </button>
      </form>
    </details>
  );
}

function AddWebSite({ datastoreId, pageLimit, onAdded }: { datastoreId: string; pageLimit: number | null; onAdded: (row: Row) => void }) {
  const { problem, busy, add } = useAdd(datastoreId, onAdded);
  return (
    <details>
      <summary>Add a web site</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const data = new FormData(form);
          const url = String(data.get('url')).trim();
          const kind = String(data.get('kind'));
          void add(form, { type: 'web_site', config: kind === 'sitemap' ? { sitemap: url } : { source_url: url } });
        }}
      >
        <fieldset>
          <legend>Start from</legend>
          <label>
            <input type="radio" name="kind" value="source_url" defaultChecked /> A start page (its links are followed on the same site)
          </label>
          <label>
            <input type="radio" name="kind" value="sitemap" /> A sitemap (sitemap.xml)
          </label>
        </fieldset>
        <label>
          Site URL
          <input name="url" type="url" required placeholder="https://www.example.com/" aria-describedby="site-limit" />
        </label>
        <small id="site-limit">{pageLimit != null ? `At most ${pageLimit} pages are read (the organization's page limit).` : ''}</small>
        <FormError problem={problem} fields={[]} id="site-error" />
        <button type="submit" aria-busy={busy} disabled={busy}>
          Add web site
        </button>
      </form>
    </details>
  );
}

function AddText({ datastoreId, onAdded }: { datastoreId: string; onAdded: (row: Row) => void }) {
  const { problem, busy, add } = useAdd(datastoreId, onAdded);
  return (
    <details>
      <summary>Add a text document</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const data = new FormData(form);
          void add(form, { type: 'text', name: String(data.get('name')).trim(), text: String(data.get('text')) });
        }}
      >
        <label>
          Document name
          <input name="name" required {...invalidProps(problem, 'name', 'text-name-error')} />
        </label>
        <FieldError problem={problem} field="name" id="text-name-error" />
        <label>
          Text
          <textarea name="text" rows={6} required {...invalidProps(problem, 'text', 'text-text-error')} />
        </label>
        <FieldError problem={problem} field="text" id="text-text-error" />
        <FormError problem={problem} fields={['name', 'text']} id="text-error" />
        <button type="submit" aria-busy={busy} disabled={busy}>
          Add text document
        </button>
      </form>
    </details>
  );
}

/** datastoreQuery: the fragments most like the question, with their scores and sources. */
function Search({ datastoreId }: { datastoreId: string }) {
  const [results, setResults] = useState<SearchDatastoreQuery['datastoreQuery'] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  async function onSubmit(event: SubmitEvent) {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setProblem(null);
    try {
      const { datastoreQuery } = await request(SearchDatastoreDocument, { id: datastoreId, input: { query: String(data.get('query')), topK: Number(data.get('topK')) || 5 } });
      setResults(datastoreQuery);
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <section aria-labelledby="search-heading">
      <h2 id="search-heading">Search</h2>
      {/* Not role="search" on the form itself: pico.css draws such a form as one pill-shaped input group. */}
      <div role="search" aria-label="Search this datastore">
      <form onSubmit={onSubmit}>
        <div class="grid">
          <label>
            Search query
            <input name="query" type="search" required {...invalidProps(problem, 'query', 'search-error')} />
          </label>
          <label>
            Fragments
            <input name="topK" type="number" min={1} max={100} defaultValue="5" />
          </label>
        </div>
        <FormError problem={problem} fields={[]} id="search-error" />
        <button type="submit" aria-busy={busy} disabled={busy}>
          Search
        </button>
      </form>
      </div>
      {results && (
        <div aria-live="polite">
          {results.length === 0 ? (
            <p>No fragment matches.</p>
          ) : (
            <ol aria-label="Search results">
              {results.map((r, i) => (
                <li key={i}>
                  <article>
                    <header>
                      <strong>Score {r.score.toFixed(3)}</strong> ·{' '}
                      {/^https?:\/\//.test(r.source) ? (
                        <a href={r.source} target="_blank" rel="noopener noreferrer">
                          {r.source}
                        </a>
                      ) : (
                        <a href={`#/datasources/${r.datasource_id}`}>{r.source || r.datasource_name}</a>
                      )}
                      {r.page != null && <> · page {r.page}</>}
                    </header>
                    <p class="fragment">{r.text}</p>
                  </article>
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}
