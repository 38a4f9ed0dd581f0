import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useMounted } from '../hooks/use-mounted.js';
import { ErrorNote } from './error-note.js';

export interface ConfirmProps {
  /** The button that opens the dialog. */
  readonly label: string;
  readonly title: string;
  /** What will happen, in words, and any inputs the action needs. */
  readonly children?: ComponentChildren;
  /** The confirming button's label. */
  readonly confirm: string;
  /** The closing button's label (default Cancel; say "Keep the job" when the action cancels). */
  readonly dismiss?: string;
  /** Runs on confirm; its error is shown in the dialog, which then stays open. */
  readonly action: () => Promise<void>;
  readonly danger?: boolean;
  readonly disabled?: boolean;
}

/**
 * A button that asks first: a modal <dialog> (focus moves into it, Escape cancels) stating what
 * the action does; the action runs only on confirm.
 */
export function Confirm(p: ConfirmProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const mounted = useMounted();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);

  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await p.action();
      if (mounted()) setOpen(false);
    } catch (e) {
      if (mounted()) setError(e instanceof Error ? e : new Error(String(e)));
    } finally {
      if (mounted()) setBusy(false);
    }
  };

  return (
    <>
      <button
        type="button"
        class={p.danger ? 'secondary' : ''}
        disabled={p.disabled}
        onClick={() => setOpen(true)}
      >
        {p.label}
      </button>
      <dialog ref={ref} aria-labelledby={titleId} onClose={() => setOpen(false)}>
        <article>
          <h2 id={titleId}>{p.title}</h2>
          {p.children}
          <ErrorNote error={error} />
          <footer>
            <button type="button" class="secondary" onClick={() => setOpen(false)}>
              {p.dismiss ?? 'Cancel'}
            </button>{' '}
            <button type="button" aria-busy={busy} disabled={busy} onClick={() => void run()}>
              {p.confirm}
            </button>
          </footer>
        </article>
      </dialog>
    </>
  );
}
