/**
 * What the management pages (organization, keys, agents) share: a server error shown beside the
 * field it names, a copy button, a confirmation dialog, dates as people read them.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { GraphQLRequestError } from '../graphql.ts';
import './manage.css';

/** A failed request as a form shows it: beside `field` when the server named one the form has. */
export interface Problem {
  field?: string;
  message: string;
}

export function problemOf(err: unknown): Problem {
  if (err instanceof GraphQLRequestError) return { field: err.field, message: err.message };
  return { message: err instanceof Error ? err.message : 'Something went wrong.' };
}

/** id, name and the ARIA links of an input the server's error may name. */
export function fieldProps(problem: Problem | null, name: string) {
  const bad = problem?.field === name;
  return {
    id: `field-${name}`,
    name,
    // Pico colours aria-invalid="false" green: say nothing until something is wrong.
    'aria-invalid': bad ? ('true' as const) : undefined,
    'aria-describedby': bad ? `field-${name}-error` : undefined,
  };
}

/** The server's message under the field it named. */
export function FieldError({ problem, name }: { problem: Problem | null; name: string }) {
  if (problem?.field !== name) return null;
  return (
    <small id={`field-${name}-error`} role="alert" class="error">
      {problem.message}
    </small>
  );
}

/** A problem no field of this form owns (`fields`: the ones it shows), above its buttons. */
export function FormError({ problem, fields }: { problem: Problem | null; fields: readonly string[] }) {
  if (!problem || (problem.field && fields.includes(problem.field))) return null;
  return (
    <p role="alert" class="error">
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

/** An instant as the reader's locale writes it, machine-readable in `datetime`. */
export function When({ at, never = '—' }: { at: string | null | undefined; never?: string }) {
  if (!at) return <span class="muted">{never}</span>;
  return <time dateTime={at}>{new Date(at).toLocaleString()}</time>;
}

export function formatNumber(n: number): string {
  return n.toLocaleString();
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
