/**
 * What the console's pages share: a server error shown beside the field it names, dialogs that
 * ask before something cannot be undone, a copy button, and how dates, sizes and numbers read.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** A failed request as a form shows it: beside `field` when the server named one the form has. */
export interface Problem {
  field?: string;
  message: string;
}

/** The server's error (GraphQLRequestError), or a check of the page's own that names its field the same way. */
export function problemOf(err: unknown, fallback = 'Something went wrong.'): Problem {
  if (!(err instanceof Error)) return { message: fallback };
  const field = (err as { field?: unknown }).field;
  return typeof field === 'string' ? { field, message: err.message } : { message: err.message };
}

export interface InvalidProps {
  'aria-invalid'?: 'true';
  'aria-describedby'?: string;
}

/**
 * The ARIA links of an input whose error FieldError shows under `id` (by default the field's own
 * id; a page with two forms naming the same field passes one per form).
 */
export function invalidProps(problem: Problem | null, field: string, id = `field-${field}-error`): InvalidProps {
  // Pico colours aria-invalid="false" green: say nothing until something is wrong.
  return problem?.field === field ? { 'aria-invalid': 'true', 'aria-describedby': id } : {};
}

/** id, name and the ARIA links of an input in a form alone on its page. */
export function fieldProps(problem: Problem | null, name: string) {
  return { id: `field-${name}`, name, ...invalidProps(problem, name) };
}

/** The server's message under the field it named (`id` as given to invalidProps). */
export function FieldError({ problem, field, id = `field-${field}-error` }: { problem: Problem | null; field: string; id?: string }) {
  if (problem?.field !== field) return null;
  return (
    <small id={id} role="alert" class="error">
      {problem.message}
    </small>
  );
}

/** A problem no field of this form owns (`fields`: the ones it shows), above its buttons. */
export function FormError({ problem, fields, id }: { problem: Problem | null; fields: readonly string[]; id?: string }) {
  if (!problem || (problem.field && fields.includes(problem.field))) return null;
  return (
    <p id={id} role="alert" class="error">
      {problem.message}
    </p>
  );
}

/** Copies `text` (navigator.clipboard) and says so in a live region. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  }
  return (
    <span class="copy">
      <button type="button" class="secondary" onClick={() => void copy()}>
        {label}
      </button>
      <span role="status" class="muted">
        {state === 'copied' ? 'Copied.' : state === 'failed' ? 'The browser refused: select the text and copy it.' : ''}
      </span>
    </span>
  );
}

/** A modal <dialog> (focus moves in, Escape cancels) open while `open`. */
export function Dialog({ open, title, onClose, children }: { open: boolean; title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  const titleId = `dialog-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose}>
      {open && (
        <article>
          <h2 id={titleId}>{title}</h2>
          {children}
        </article>
      )}
    </dialog>
  );
}

/** Asks before something that cannot be undone; the confirming button names the action. */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  confirmLabel: string;
  busy?: boolean;
  problem?: Problem | null;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  return (
    <Dialog open={props.open} title={props.title} onClose={props.onCancel}>
      {props.children}
      {props.problem && (
        <p role="alert" class="error">
          {props.problem.message}
        </p>
      )}
      <footer>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" aria-busy={props.busy} disabled={props.busy} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </footer>
    </Dialog>
  );
}

/** A button that asks first (ConfirmDialog, titled by the button's name) and then runs `onConfirm`. */
export function ConfirmButton(props: { label: string; accessibleLabel?: string; question: ComponentChildren; confirmLabel: string; onConfirm: () => Promise<void> | void; class?: string }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  async function confirm() {
    setBusy(true);
    setProblem(null);
    try {
      await props.onConfirm();
      setOpen(false);
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <button type="button" class={props.class ?? 'secondary outline'} aria-label={props.accessibleLabel} onClick={() => setOpen(true)}>
        {props.label}
      </button>
      <ConfirmDialog
        open={open}
        title={props.accessibleLabel ?? props.label}
        confirmLabel={props.confirmLabel}
        busy={busy}
        problem={problem}
        onConfirm={() => void confirm()}
        onCancel={() => setOpen(false)}
      >
        <p>{props.question}</p>
      </ConfirmDialog>
    </>
  );
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** An instant as the reader's locale writes it, machine-readable in `datetime`. */
export function When({ at, never = '—' }: { at: string | null | undefined; never?: string }) {
  if (!at) return <span class="muted">{never}</span>;
  return <time dateTime={at}>{formatDate(at)}</time>;
}

export function formatNumber(n: number): string {
  return n.toLocaleString();
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes == null) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Every page of a connection (the console lists at most a few hundred of a kind). */
export async function allNodes<T>(page: (after: string | null) => Promise<{ nodes: T[]; pageInfo: { endCursor?: string | null; hasNextPage: boolean } }>): Promise<T[]> {
  const out: T[] = [];
  let after: string | null = null;
  for (;;) {
    const { nodes, pageInfo } = await page(after);
    out.push(...nodes);
    if (!pageInfo.hasNextPage || !pageInfo.endCursor) return out;
    after = pageInfo.endCursor;
  }
}

interface Connection<T> {
  nodes: T[];
  pageInfo: { endCursor?: string | null; hasNextPage: boolean };
}

/**
 * A connection read page by page as a list shows it: the rows so far (null while the first page
 * loads), whether there is more, the problem of the last read, `more()` for the next page and
 * `reload()` from the first. It reads the first page again whenever `deps` change.
 */
export function usePages<T>(page: (after: string | null) => Promise<Connection<T>>, deps: unknown[] = []) {
  const [rows, setRows] = useState<T[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  // The latest `page`: it reads the filters of the render that asks.
  const latest = useRef(page);
  latest.current = page;
  async function load(after: string | null) {
    setProblem(null);
    try {
      const { nodes, pageInfo } = await latest.current(after);
      setRows((old) => [...(after ? (old ?? []) : []), ...nodes]);
      setNext(pageInfo.hasNextPage ? (pageInfo.endCursor ?? null) : null);
    } catch (err) {
      setProblem(problemOf(err));
    }
  }
  useEffect(() => void load(null), deps);
  return { rows, next, problem, more: () => load(next), reload: () => load(null) };
}

export type Pages<T> = ReturnType<typeof usePages<T>>;

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
}

/**
 * A paged list as every list page shows it: its load problem, a busy line, an empty line, a table
 * with one row per node, and a button for the next page.
 */
export function PagedTable<T extends { id: string }>(props: { pages: Pages<T>; noun: string; empty: string; caption?: string; columns: Column<T>[] }) {
  const { rows, next, problem, more } = props.pages;
  return (
    <>
      {problem && (
        <p role="alert" class="error">
          {problem.message}
        </p>
      )}
      {rows === null ? (
        !problem && <p aria-busy="true">Loading {props.noun}…</p>
      ) : rows.length === 0 ? (
        <p class="muted">{props.empty}</p>
      ) : (
        <div class="scroll">
          <table>
            {props.caption && <caption class="muted">{props.caption}</caption>}
            <thead>
              <tr>
                {props.columns.map((c) => (
                  <th key={c.header} scope="col">
                    {c.header}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id}>
                  {props.columns.map((c) => (
                    <td key={c.header}>{c.cell(row)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <button type="button" class="secondary" onClick={() => void more()}>
          More {props.noun}
        </button>
      )}
    </>
  );
}
