/**
 * Small pieces the datastore and form pages share: an error shown beside the field the server
 * named, a confirmation in a <dialog>, and how sizes and dates read.
 */
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { GraphQLRequestError } from '../graphql.ts';

/** A failure as the page shows it: the message, and the input field it belongs beside (if any). */
export interface Problem {
  message: string;
  field?: string;
}

export function problemOf(err: unknown, fallback = 'The request failed.'): Problem {
  if (err instanceof GraphQLRequestError) return { message: err.message, field: err.field };
  return { message: err instanceof Error ? err.message : fallback };
}

/** The problem's message when it names `field` (or, with `field` null, when it names none of `known`). */
export function FieldError({ problem, field, id, known = [] }: { problem: Problem | null; field: string | null; id: string; known?: string[] }) {
  if (!problem) return null;
  const mine = field === null ? !problem.field || !known.includes(problem.field) : problem.field === field;
  if (!mine) return null;
  return (
    <p role="alert" id={id} class="error">
      {problem.message}
    </p>
  );
}

export interface InvalidProps {
  'aria-invalid'?: 'true';
  'aria-describedby'?: string;
}

/** aria attributes for an input whose error FieldError may show under `id`. */
export function invalidProps(problem: Problem | null, field: string, id: string): InvalidProps {
  return problem?.field === field ? { 'aria-invalid': 'true', 'aria-describedby': id } : {};
}

/** A button that asks first, in a modal <dialog> (focus moves into it; Escape cancels). */
export function ConfirmButton(props: { label: string; accessibleLabel?: string; question: ComponentChildren; confirmLabel: string; onConfirm: () => Promise<void> | void; class?: string }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  async function confirm() {
    setBusy(true);
    setProblem(null);
    try {
      await props.onConfirm();
      dialog.current?.close();
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <button type="button" class={props.class ?? 'secondary outline'} aria-label={props.accessibleLabel} onClick={() => dialog.current?.showModal()}>
        {props.label}
      </button>
      <dialog ref={dialog} aria-label={props.accessibleLabel ?? props.label}>
        <article>
          <p>{props.question}</p>
          {problem && (
            <p role="alert" class="error">
              {problem.message}
            </p>
          )}
          <footer>
            <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
              Cancel
            </button>{' '}
            <button type="button" class="danger" aria-busy={busy} disabled={busy} onClick={() => void confirm()}>
              {props.confirmLabel}
            </button>
          </footer>
        </article>
      </dialog>
    </>
  );
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes == null) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}
