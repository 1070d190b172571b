import { useState } from 'preact/hooks';
import '../data-ui/data.css';
import { FieldError, FormError, formatDate, invalidProps, problemOf, PagedTable, usePages, type Problem } from '../ui.tsx';
import { graphql } from '../gql/index.ts';
import type { DatastoresQuery, Visibility } from '../gql/graphql.ts';
import { request } from '../graphql.ts';
import { navigate } from '../router.ts';

const DatastoresDocument = graphql(`
  query Datastores($after: String) {
    datastores(first: 50, after: $after) {
      nodes { id name description visibility createdAt updatedAt }
      pageInfo { endCursor hasNextPage }
    }
  }
`);

const CreateDatastoreDocument = graphql(`
  mutation CreateDatastore($input: CreateDatastoreInput!) {
    createDatastore(input: $input) { id }
  }
`);

type Row = DatastoresQuery['datastores']['nodes'][number];

const CREATE_FIELDS = ['name', 'description', 'chunkSize', 'chunkOverlap', 'allowedOrigins', 'resyncSchedule'];

/** The organization's datastores, and a form to create one. */
export function Datastores() {
  const pages = usePages<Row>(async (after) => (await request(DatastoresDocument, { after })).datastores);

  return (
    <section>
      <h1>Datastores</h1>
      <PagedTable
        pages={pages}
        noun="datastores"
        empty="No datastore yet: create the first one below."
        caption="The organization's datastores, newest first"
        columns={[
          { header: 'Name', cell: (d) => <a href={`#/datastores/${d.id}`}>{d.name}</a> },
          { header: 'Description', cell: (d) => d.description },
          { header: 'Visibility', cell: (d) => <span class="badge">{d.visibility}</span> },
          { header: 'Created', cell: (d) => formatDate(d.createdAt) },
        ]}
      />
      <CreateDatastore />
    </section>
  );
}

function CreateDatastore() {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: SubmitEvent) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const int = (name: string) => (text(name) === '' ? undefined : Number(text(name)));
    const origins = text('allowedOrigins')
      .split(/\s+/)
      .filter(Boolean);
    setBusy(true);
    setProblem(null);
    try {
      const { createDatastore } = await request(CreateDatastoreDocument, {
        input: {
          name: text('name'),
          description: text('description'),
          visibility: text('visibility') as Visibility,
          chunkSize: int('chunkSize'),
          chunkOverlap: int('chunkOverlap'),
          allowedOrigins: origins.length ? origins : undefined,
          resyncSchedule: text('resyncSchedule') || undefined,
        },
      });
      navigate(`/datastores/${createDatastore.id}`);
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }

  const field = (name: string) => invalidProps(problem, name, `create-${name}-error`);
  return (
    <article>
      <h2>New datastore</h2>
      <form onSubmit={onSubmit}>
        <label>
          Name
          <input name="name" required {...field('name')} />
        </label>
        <FieldError problem={problem} field="name" id="create-name-error" />
        <label>
          Description
          <input name="description" {...field('description')} />
        </label>
        <FieldError problem={problem} field="description" id="create-description-error" />
        <label>
          Visibility
          <select name="visibility" {...field('visibility')}>
            <option value="private">Private: the organization only</option>
            <option value="public">Public: anyone may search it</option>
          </select>
        </label>
        <details>
          <summary>More settings</summary>
          <div class="grid">
            <label>
              Characters per chunk
              <input name="chunkSize" type="number" min={100} max={8000} placeholder="1000" {...field('chunkSize')} />
              <FieldError problem={problem} field="chunkSize" id="create-chunkSize-error" />
            </label>
            <label>
              Characters shared by neighbouring chunks
              <input name="chunkOverlap" type="number" min={0} max={4000} placeholder="200" {...field('chunkOverlap')} />
              <FieldError problem={problem} field="chunkOverlap" id="create-chunkOverlap-error" />
            </label>
          </div>
          <label>
            Allowed origins (one per line; empty: any)
            <textarea name="allowedOrigins" rows={2} placeholder="https://www.example.com" {...field('allowedOrigins')} />
          </label>
          <FieldError problem={problem} field="allowedOrigins" id="create-allowedOrigins-error" />
          <label>
            Re-sync web pages (none, daily, weekly or a cron expression)
            <input name="resyncSchedule" placeholder="none" {...field('resyncSchedule')} />
          </label>
          <FieldError problem={problem} field="resyncSchedule" id="create-resyncSchedule-error" />
        </details>
        <FormError problem={problem} fields={CREATE_FIELDS} id="create-error" />
        <button type="submit" aria-busy={busy} disabled={busy}>
          Create datastore
        </button>
      </form>
    </article>
  );
}
