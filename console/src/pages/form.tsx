import { useEffect, useRef, useState } from 'preact/hooks';
import '../data-ui/data.css';
import { ConfirmButton, formatDate, invalidProps, problemOf, type Problem } from '../ui.tsx';
import { graphql } from '../gql/index.ts';
import type { FormChatMutation, FormPageQuery, FormSubmissionsQuery } from '../gql/graphql.ts';

type FormPageSubmissions = FormSubmissionsQuery['formSubmissions']['nodes'];
import { request } from '../graphql.ts';
import { navigate } from '../router.ts';
import { FormFields, parseSchema } from './forms.tsx';

const FormPageDocument = graphql(`
  query FormPage($id: ID!) {
    form(id: $id) { id name intro published schema webhookUrl createdAt updatedAt }
  }
`);

const FormSubmissionsDocument = graphql(`
  query FormSubmissions($formId: ID!) {
    formSubmissions(formId: $formId, first: 50) {
      nodes { id status values skipped currentField createdAt completedAt webhookError }
      pageInfo { hasNextPage }
    }
  }
`);

const UpdateFormDocument = graphql(`
  mutation UpdateForm($id: ID!, $input: UpdateFormInput!) {
    updateForm(id: $id, input: $input) { id name intro published schema webhookUrl createdAt updatedAt }
  }
`);

const DeleteFormDocument = graphql(`
  mutation DeleteForm($id: ID!) {
    deleteForm(id: $id) { id }
  }
`);

const FormChatDocument = graphql(`
  mutation FormChat($formId: ID!, $input: FormChatInput!) {
    formChat(formId: $formId, input: $input) { answer conversationId visitorId currentField isValid status values }
  }
`);

type Form = FormPageQuery['form'];

/** One form: edit it, try it in a chat, read its submissions. */
export function FormPage({ params }: { params: Record<string, string> }) {
  const id = params.id!;
  const [form, setForm] = useState<Form | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [submissionsVersion, setSubmissionsVersion] = useState(0);

  useEffect(() => {
    request(FormPageDocument, { id })
      .then((d) => setForm(d.form))
      .catch((err) => setProblem(problemOf(err)));
  }, [id]);

  if (problem)
    return (
      <section>
        <h1>Form</h1>
        <p role="alert" class="error">
          {problem.message}
        </p>
        <a href="#/forms">All forms</a>
      </section>
    );
  if (!form) return <p aria-busy="true">Loading the form…</p>;

  return (
    <section>
      <nav aria-label="Breadcrumb">
        <ul>
          <li>
            <a href="#/forms">Forms</a>
          </li>
          <li>{form.name}</li>
        </ul>
      </nav>
      <h1>{form.name}</h1>
      <EditForm form={form} onSaved={setForm} />
      <TryForm key={`${form.updatedAt}`} form={form} onTurn={() => setSubmissionsVersion((v) => v + 1)} />
      <Submissions formId={id} version={submissionsVersion} />
      <h2>Delete</h2>
      <ConfirmButton
        label="Delete form"
        question={`Delete the form "${form.name}" with its conversations and submissions? This cannot be undone.`}
        confirmLabel="Delete"
        class="danger"
        onConfirm={async () => {
          await request(DeleteFormDocument, { id });
          navigate('/forms');
        }}
      />
    </section>
  );
}

function EditForm({ form, onSaved }: { form: Form; onSaved: (form: Form) => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  async function onSubmit(event: SubmitEvent) {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setProblem(null);
    setSaved(false);
    try {
      const webhookUrl = String(data.get('webhookUrl') ?? '').trim();
      const { updateForm } = await request(UpdateFormDocument, {
        id: form.id,
        input: {
          name: String(data.get('name')).trim(),
          intro: String(data.get('intro') ?? ''),
          published: data.get('published') === 'on',
          schema: parseSchema(String(data.get('schema'))),
          ...(webhookUrl ? { webhookUrl } : {}),
        },
      });
      onSaved(updateForm);
      setSaved(true);
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }
  const field = (name: string) => invalidProps(problem, name, `edit-${name}-error`);
  return (
    <article>
      <h2>Edit form</h2>
      <form onSubmit={onSubmit}>
        <FormFields
          problem={problem}
          field={field}
          idPrefix="edit"
          values={{ name: form.name, intro: form.intro, published: form.published, schema: JSON.stringify(form.schema, null, 2), webhookUrl: form.webhookUrl ?? '' }}
        />
        {saved && <p role="status">Saved.</p>}
        <button type="submit" aria-busy={busy} disabled={busy}>
          Save form
        </button>
      </form>
    </article>
  );
}

interface Line {
  from: 'You' | 'Form';
  text: string;
}

/** The form's chat as a visitor has it, with where it stands beside it. */
function TryForm({ form, onTurn }: { form: Form; onTurn: () => void }) {
  const [lines, setLines] = useState<Line[]>([]);
  const [state, setState] = useState<FormChatMutation['formChat'] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const log = useRef<HTMLDivElement>(null);
  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [lines.length]);

  if (!form.published)
    return (
      <article>
        <h2>Try it</h2>
        <p class="muted">Publish the form to try its chat: unpublished forms answer no one.</p>
      </article>
    );

  async function onSubmit(event: SubmitEvent) {
    event.preventDefault();
    const element = event.currentTarget as HTMLFormElement;
    const message = String(new FormData(element).get('message')).trim();
    if (!message) return;
    setBusy(true);
    setProblem(null);
    setLines((old) => [...old, { from: 'You', text: message }]);
    try {
      const { formChat } = await request(FormChatDocument, {
        formId: form.id,
        input: { query: message, conversationId: state?.conversationId, visitorId: state?.visitorId },
      });
      setState(formChat);
      setLines((old) => [...old, { from: 'Form', text: formChat.answer }]);
      element.reset();
      onTurn();
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <article>
      <h2>Try it</h2>
      <div class="grid">
        <div>
          <div class="chat-log" role="log" aria-label="Form chat" ref={log}>
            {lines.length === 0 && <p class="muted">Say hello to start: the form asks its questions one by one.</p>}
            {lines.map((l, i) => (
              <p key={i}>
                <strong>{l.from}:</strong> {l.text}
              </p>
            ))}
          </div>
          <form onSubmit={onSubmit}>
            <fieldset role="group">
              <input name="message" aria-label="Message" autoComplete="off" required />
              <button type="submit" aria-busy={busy} disabled={busy}>
                Send
              </button>
            </fieldset>
          </form>
          {problem && (
            <p role="alert" class="error">
              {problem.message}
            </p>
          )}
          {state && (
            <button type="button" class="secondary outline" onClick={() => (setState(null), setLines([]))}>
              New conversation
            </button>
          )}
        </div>
        <aside aria-label="Where the form stands">
          <dl>
            <dt>Field being asked</dt>
            <dd data-testid="current-field">{state ? (state.currentField ?? 'none: the form is complete') : '—'}</dd>
            <dt>Last answer</dt>
            <dd data-testid="validity">{state ? (state.isValid ? 'valid' : 'refused: asked again') : '—'}</dd>
            <dt>Status</dt>
            <dd>{state?.status.replace('_', ' ') ?? '—'}</dd>
            <dt>Values so far (all valid)</dt>
            <dd>
              <pre>{state ? JSON.stringify(state.values, null, 2) : '{}'}</pre>
            </dd>
          </dl>
        </aside>
      </div>
    </article>
  );
}

/** Submissions, newest first; read again after each message of the try-out chat. */
function Submissions({ formId, version }: { formId: string; version: number }) {
  const [rows, setRows] = useState<FormPageSubmissions | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    request(FormSubmissionsDocument, { formId })
      .then((d) => setRows(d.formSubmissions.nodes))
      .catch((err) => setProblem(problemOf(err)));
  }, [formId, version]);
  return (
    <section aria-labelledby="submissions-heading">
      <h2 id="submissions-heading">Submissions</h2>
      {problem && (
        <p role="alert" class="error">
          {problem.message}
        </p>
      )}
      {rows === null ? (
        <p aria-busy="true">Loading submissions…</p>
      ) : rows.length === 0 ? (
        <p class="muted">No submission yet.</p>
      ) : (
        <div class="scroll">
          <table aria-labelledby="submissions-heading">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Status</th>
                <th scope="col">Values</th>
                <th scope="col">Completed</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.id}>
                  <td>{formatDate(s.createdAt)}</td>
                  <td>
                    {s.status.replace('_', ' ')}
                    {s.currentField && <span class="muted"> (asking {s.currentField})</span>}
                  </td>
                  <td>
                    <code>{JSON.stringify(s.values)}</code>
                    {s.webhookError && <p class="error">Webhook: {s.webhookError}</p>}
                  </td>
                  <td>{formatDate(s.completedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}


