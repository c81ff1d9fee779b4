import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { messageOf } from '../api/client';
import { markInteractive } from '../interactive';

/** What every page shares: loading a resource, showing an error in words, dates, copy buttons, confirmations. */

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** An action a member starts (a form sent, a button pressed): whether it runs, and its error to show in words. */
export interface Action {
  busy: boolean;
  error: unknown;
  /** Runs `action` with busy set and the last error cleared; a failure is kept in `error`. True when it succeeded. */
  run: (action: () => Promise<unknown>) => Promise<boolean>;
  clearError: () => void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  const clearError = useCallback(() => setError(undefined), []);
  return { busy, error, run, clearError };
}

/** Loads `load()` now and again whenever a key changes; an answer that arrives after a newer request is dropped. */
export function useLoad<T>(load: () => Promise<T>, keys: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => ticket === latest.current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => ticket === latest.current && setState({ data: undefined, error, loading: false }),
    );
    // The keys name what the load depends on (a filter, a page), as a dependency list does.
  }, [...keys, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { ...state, reload };
}

export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  if (error === undefined || error === null) return null;
  return (
    <div className="notice error" role="alert">
      {title ? <strong>{title}: </strong> : null}
      {messageOf(error)}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** A resource's three states in one place: its error in words, a loading line, then the content. */
export function Show<T>({
  loaded,
  what,
  children,
}: {
  loaded: Loaded<T>;
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (loaded.error !== undefined) {
    return (
      <>
        <ErrorNotice error={loaded.error} title={`Could not load ${what}`} />
        <button type="button" onClick={loaded.reload}>
          Try again
        </button>
      </>
    );
  }
  if (loaded.data === undefined) return <Loading what={what} />;
  return <Shown>{children(loaded.data)}</Shown>;
}

/** Content on screen: the first time, the page is interactive. */
function Shown({ children }: { children: ReactNode }) {
  useEffect(markInteractive, []);
  return <>{children}</>;
}

const localFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A moment in the member's time zone, its UTC time on hover (epoch ms or ISO 8601). */
export function Time({ at }: { at: number | string | null | undefined }) {
  if (at === null || at === undefined || at === '') return <span className="muted">—</span>;
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return <span>{String(at)}</span>;
  const iso = date.toISOString();
  return (
    <time dateTime={iso} title={`${iso.replace('T', ' ').replace(/\.\d+Z$/, '')} UTC`}>
      {localFormat.format(date)}
    </time>
  );
}

async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  // Served over plain HTTP to another host than loopback, the Clipboard API is absent: the old way.
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <button
      type="button"
      className="small"
      aria-label={label}
      onClick={() =>
        copyText(text).then(
          () => setState('copied'),
          () => setState('failed'),
        )
      }
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy it' : 'Copy'}
      <span className="visually-hidden" aria-live="polite">
        {state === 'copied' ? ' copied to the clipboard' : ''}
      </span>
    </button>
  );
}

/**
 * A button that asks first, in a modal <dialog> (focus moves into it, Escape cancels), then runs `action`;
 * the action's error is shown in words beside the button.
 */
export function ConfirmButton({
  label,
  accessibleLabel,
  question,
  confirmLabel,
  action,
  danger = true,
}: {
  label: string;
  accessibleLabel?: string;
  question: ReactNode;
  confirmLabel: string;
  action: () => Promise<unknown>;
  danger?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const { busy, error, run, clearError } = useAction();
  const confirm = async () => {
    await run(action);
    dialog.current?.close();
  };
  return (
    <>
      <button
        type="button"
        className={danger ? 'small danger' : 'small'}
        aria-label={accessibleLabel ?? label}
        onClick={() => {
          clearError();
          dialog.current?.showModal();
        }}
      >
        {label}
      </button>
      <ErrorNotice error={error} />
      <dialog ref={dialog} aria-label={accessibleLabel ?? label}>
        <p>{question}</p>
        <div className="actions">
          <button type="button" onClick={() => dialog.current?.close()} autoFocus>
            Cancel
          </button>
          <button type="button" className={danger ? 'danger' : 'primary'} disabled={busy} onClick={confirm}>
            {busy ? 'Working…' : confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}

/** Previous / next over an offset-paged list. */
export function Pager({
  offset,
  count,
  total,
  onChange,
  what,
}: {
  offset: number;
  count: number;
  total: number;
  onChange: (offset: number) => void;
  what: string;
}) {
  if (total === 0) return null;
  const last = Math.min(offset + count, total);
  return (
    <nav className="pager" aria-label={`Pages of ${what}`}>
      <span>
        {offset + 1}–{last} of {total.toLocaleString()} {what}
      </span>
      <button type="button" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - count))}>
        Previous page
      </button>
      <button type="button" disabled={last >= total} onClick={() => onChange(offset + count)}>
        Next page
      </button>
    </nav>
  );
}

/** A page of its own (sign-in, a failure before any page): one card in the middle. */
export function Centered({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="centered" id="main">
      <div className="card narrow">
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
