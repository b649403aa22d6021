/** Small shared pieces: error and empty states, copy button, confirmation, JSON view. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from './api';

/** The API's error shown as is (its message, and its details when it has some). */
export function ErrorBox({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const msg = error instanceof ApiError ? error.body.message : error instanceof Error ? error.message : String(error);
  const code = error instanceof ApiError ? `${error.status} ${error.body.error}` : 'error';
  return (
    <p class="error" role="alert">
      <strong>{code}</strong>: {msg}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setDone(true);
        } catch {
          setDone(false);
        }
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

/** A value shown once (a new key): read-only, selectable, with a copy button. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  return (
    <div class="shown-once">
      <label>
        {label} <small>(shown once: copy it now)</small>
        <input readOnly value={value} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
      </label>
      <CopyButton text={value} />
    </div>
  );
}

/** Asks to type `word` before `onConfirm` runs (destructive actions). */
export function Confirm(props: { word: string; what: string; onConfirm: () => void; onCancel: () => void }) {
  const [typed, setTyped] = useState('');
  return (
    <div role="alertdialog" aria-label={`Confirm: ${props.what}`}>
    <form
      class="confirm"
      onSubmit={(e) => {
        e.preventDefault();
        if (typed === props.word) props.onConfirm();
      }}
    >
      <p>{props.what}. This cannot be undone.</p>
      <label>
        Type <code>{props.word}</code> to confirm
        <input autoFocus value={typed} onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <button type="submit" class="danger" disabled={typed !== props.word}>
        Confirm
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </form>
    </div>
  );
}

export function JsonView({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre class="json" aria-label={label}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** Parses JSON typed by a person; null when empty. Throws Error with a readable message. */
export function parseJsonInput(text: string, what: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} is not valid JSON: ${(e as Error).message}`);
  }
}
