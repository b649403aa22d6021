import { useState } from 'preact/hooks';
import { ApiError, call, type FieldDefinition, type Json, type RecordDoc } from '../api';
import { ErrorBox } from '../ui';
import { fromValue, toValue } from './record-form';

/** A value as the table shows it: text as is, other values as JSON, a missing value empty. */
export const cellText = (v: Json | undefined): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/**
 * A table cell of a user field, edited in place: double-click it (or focus it and press Enter),
 * change the value, Enter or *Save* (Escape or *Cancel* leaves it). The save is a PATCH of that
 * one field with the version the row shows, so a record changed meanwhile is a 409 (`onConflict`)
 * and nothing is overwritten. An emptied cell removes the value.
 */
export function EditableCell(props: {
  record: RecordDoc;
  field: string;
  def: FieldDefinition;
  base: string;
  secret: string;
  onSaved: (r: RecordDoc) => void;
  onConflict: (err: ApiError) => void;
}) {
  const { record, field, def } = props;
  const [draft, setDraft] = useState<string | boolean | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const label = `${field} of ${record.id}`;
  if (draft === null) {
    return (
      <td
        class="editable"
        data-field={field}
        tabIndex={0}
        title="Double-click (or Enter) to edit"
        onDblClick={() => setDraft(fromValue(def, record[field]))}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            setDraft(fromValue(def, record[field]));
          }
        }}
      >
        {cellText(record[field])}
      </td>
    );
  }
  const cancel = () => {
    setDraft(null);
    setError(null);
  };
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      const value = toValue(def, draft);
      const r = await call<{ record: RecordDoc }>(props.secret, 'PATCH', `${props.base}/${encodeURIComponent(record.id)}`, {
        data: { [field]: value === undefined ? null : value },
        version: record.version,
      });
      setDraft(null);
      props.onSaved(r.record);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        setDraft(null);
        props.onConflict(err);
      } else setError(err);
    } finally {
      setBusy(false);
    }
  };
  const keys = (e: KeyboardEvent) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      void save();
    } else if (e.key === 'Escape') cancel();
  };
  return (
    <td data-field={field} class="editing">
      {def.type === 'boolean' ? (
        <input type="checkbox" aria-label={label} autoFocus checked={draft === true} onKeyDown={keys} onChange={(e) => setDraft((e.currentTarget as HTMLInputElement).checked)} />
      ) : def.type === 'number' || def.type === 'integer' ? (
        <input aria-label={label} name={`cell-${field}`} autoFocus type="number" step={def.type === 'number' ? 'any' : '1'} value={String(draft)} onKeyDown={keys} onInput={(e) => setDraft((e.currentTarget as HTMLInputElement).value)} />
      ) : (
        <input aria-label={label} name={`cell-${field}`} autoFocus type="text" value={String(draft)} onKeyDown={keys} onInput={(e) => setDraft((e.currentTarget as HTMLInputElement).value)} />
      )}
      <span class="cell-actions">
        <button type="button" disabled={busy} onClick={() => void save()}>
          Save
        </button>
        <button type="button" onClick={cancel}>
          Cancel
        </button>
      </span>
      <ErrorBox error={error} />
    </td>
  );
}
