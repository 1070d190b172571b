import { useState } from 'preact/hooks';
import '../data-ui/data.css';
import { FieldError, FormError, formatDate, invalidProps, problemOf, PagedTable, usePages, type InvalidProps, type Problem } from '../ui.tsx';
import { graphql } from '../gql/index.ts';
import type { FormsQuery } from '../gql/graphql.ts';
import { request } from '../graphql.ts';
import { navigate } from '../router.ts';

const FormsDocument = graphql(`
  query Forms($after: String) {
    forms(first: 50, after: $after) {
      nodes { id name published updatedAt }
      pageInfo { endCursor hasNextPage }
    }
  }
`);

const CreateFormDocument = graphql(`
  mutation CreateForm($input: CreateFormInput!) {
    createForm(input: $input) { form { id } webhookSecret }
  }
`);

/** A schema to start from: one question per property, in order. */
export const EXAMPLE_SCHEMA = JSON.stringify(
  {
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Your name', minLength: 2 },
      email: { type: 'string', format: 'email', title: 'Email address' },
    },
    required: ['name', 'email'],
  },
  null,
  2,
);

/** Parses the schema textarea; a JSON mistake is reported beside the field like the server's. */
export function parseSchema(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw Object.assign(new Error(`The schema is not JSON: ${(err as Error).message}`), { field: 'schema' });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw Object.assign(new Error('The schema must be a JSON object.'), { field: 'schema' });
  return value as Record<string, unknown>;
}

/** The organization's conversational forms, and a form to create one. */
export function Forms() {
  const pages = usePages<FormsQuery['forms']['nodes'][number]>(async (after) => (await request(FormsDocument, { after })).forms);

  return (
    <section>
      <h1>Forms</h1>
      <PagedTable
        pages={pages}
        noun="forms"
        empty="No form yet: create the first one below."
        caption="The organization's forms, newest first"
        columns={[
          { header: 'Name', cell: (f) => <a href={`#/forms/${f.id}`}>{f.name}</a> },
          { header: 'Published', cell: (f) => (f.published ? 'yes' : 'no') },
          { header: 'Updated', cell: (f) => formatDate(f.updatedAt) },
        ]}
      />
      <CreateForm />
    </section>
  );
}

function CreateForm() {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const [secret, setSecret] = useState<{ id: string; secret: string } | null>(null);

  async function onSubmit(event: SubmitEvent) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setProblem(null);
    try {
      const webhookUrl = String(form.get('webhookUrl') ?? '').trim();
      const { createForm } = await request(CreateFormDocument, {
        input: {
          name: String(form.get('name')).trim(),
          intro: String(form.get('intro') ?? ''),
          published: form.get('published') === 'on',
          schema: parseSchema(String(form.get('schema'))),
          webhookUrl: webhookUrl || undefined,
        },
      });
      // The webhook secret is shown only now: keep the page until it is copied.
      if (webhookUrl) setSecret({ id: createForm.form.id, secret: createForm.webhookSecret });
      else navigate(`/forms/${createForm.form.id}`);
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }

  if (secret)
    return (
      <article>
        <h2>Form created</h2>
        <p>
          Its webhook secret, shown only this once (deliveries are signed with it): <code>{secret.secret}</code>
        </p>
        <a href={`#/forms/${secret.id}`} role="button">
          Open the form
        </a>
      </article>
    );

  const field = (name: string) => invalidProps(problem, name, `form-${name}-error`);
  return (
    <article>
      <h2>New form</h2>
      <form onSubmit={onSubmit}>
        <FormFields problem={problem} field={field} idPrefix="form" values={{ name: '', intro: '', published: true, schema: EXAMPLE_SCHEMA, webhookUrl: '' }} />
        <button type="submit" aria-busy={busy} disabled={busy}>
          Create form
        </button>
      </form>
    </article>
  );
}

export const FORM_FIELDS = ['name', 'intro', 'schema', 'webhookUrl'];

/** The inputs of a form's record, for creating and editing alike. */
export function FormFields(props: {
  problem: Problem | null;
  field: (name: string) => InvalidProps;
  idPrefix: string;
  values: { name: string; intro: string; published: boolean; schema: string; webhookUrl: string };
}) {
  const { problem, field, idPrefix, values } = props;
  return (
    <>
      <label>
        Name
        <input name="name" required defaultValue={values.name} {...field('name')} />
      </label>
      <FieldError problem={problem} field="name" id={`${idPrefix}-name-error`} />
      <label>
        Introduction (said before the first question)
        <input name="intro" defaultValue={values.intro} {...field('intro')} />
      </label>
      <FieldError problem={problem} field="intro" id={`${idPrefix}-intro-error`} />
      <label>
        JSON Schema
        <textarea name="schema" class="schema" spellcheck={false} required defaultValue={values.schema} {...field('schema')} />
      </label>
      <FieldError problem={problem} field="schema" id={`${idPrefix}-schema-error`} />
      <label>
        Webhook URL (receives completed submissions; optional)
        <input name="webhookUrl" type="url" defaultValue={values.webhookUrl} {...field('webhookUrl')} />
      </label>
      <FieldError problem={problem} field="webhookUrl" id={`${idPrefix}-webhookUrl-error`} />
      <label>
        <input name="published" type="checkbox" role="switch" defaultChecked={values.published} /> Published (its chat answers visitors)
      </label>
      <FormError problem={problem} fields={FORM_FIELDS} id={`${idPrefix}-error`} />
    </>
  );
}
