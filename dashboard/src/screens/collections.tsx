import { useEffect, useState } from 'preact/hooks';
import { FIELD_OPTIONS, FIELD_TYPES, call, projectPath, type Collection, type FieldDefinition, type FieldType, type RuleKind, type Rules } from '../api';
import { useProjectKey } from '../project-key';
import { Confirm, Empty, ErrorBox } from '../ui';
import { RulesEditor, type RuleProblem } from './rules-editor';

interface FieldRow extends FieldDefinition {
  name: string;
  /** Already stored: its type cannot change. */
  stored: boolean;
}

/** Collections: list, create, edit fields (every type and option) and rules, delete. */
export function Collections({ project }: { project: string }) {
  const { key, error: keyError } = useProjectKey(project);
  const [list, setList] = useState<Collection[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<Collection | 'new' | null>(null);
  const load = async (k: string) => {
    try {
      setList((await call<{ collections: Collection[] }>(k, 'GET', projectPath(project, '/collections'))).collections);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => {
    if (key) void load(key);
  }, [key]);
  if (!key) return <ErrorBox error={keyError} />;
  return (
    <section aria-labelledby="collections-h">
      <h1 id="collections-h">Collections</h1>
      <button type="button" onClick={() => setEditing('new')}>
        New collection
      </button>
      <ErrorBox error={error} />
      {list === null ? (
        <p>Loading…</p>
      ) : list.length === 0 ? (
        <Empty>No collections yet.</Empty>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Fields</th>
                <th>Rules</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.map((c) => (
                <tr key={c.name}>
                  <td>{c.name}</td>
                  <td>{Object.entries(c.fields).map(([f, d]) => `${f}: ${d.type}`).join(', ')}</td>
                  <td>{Object.keys(c.rules).join(', ') || 'none (only the secret key)'}</td>
                  <td class="actions">
                    <button type="button" onClick={() => setEditing(c)}>
                      Edit {c.name}
                    </button>
                    <a href={`#/p/${encodeURIComponent(project)}/records/${encodeURIComponent(c.name)}`}>Records</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && (
        <Editor
          key={editing === 'new' ? 'new' : editing.name}
          project={project}
          secret={key}
          collection={editing === 'new' ? null : editing}
          onDone={() => {
            setEditing(null);
            void load(key);
          }}
        />
      )}
    </section>
  );
}

function Editor(props: { project: string; secret: string; collection: Collection | null; onDone: () => void }) {
  const c = props.collection;
  const [name, setName] = useState(c?.name ?? '');
  const [rows, setRows] = useState<FieldRow[]>(
    c ? Object.entries(c.fields).map(([n, d]) => ({ ...d, name: n, stored: true })) : [{ name: '', type: 'text', stored: false }],
  );
  const [rules, setRules] = useState<Rules>(c?.rules ?? {});
  const [problems, setProblems] = useState<Partial<Record<RuleKind, RuleProblem>>>({});
  const [error, setError] = useState<unknown>(null);
  const [confirming, setConfirming] = useState(false);
  const fields = Object.fromEntries(
    // A row keeps the value options it was loaded with (min, pattern, default, …): saving never drops them.
    rows
      .filter((r) => r.name.trim() !== '')
      .map(({ name: n, stored: _stored, searchable, ...d }) => [
        n.trim(),
        // `searchable` only on text fields, sent as false to turn it off.
        { ...d, required: !!d.required, unique: !!d.unique, indexed: !!d.indexed, ...(d.type === 'text' && searchable !== undefined ? { searchable } : {}) },
      ]),
  );
  const setRow = (i: number, patch: Partial<FieldRow>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const base = projectPath(props.project, '/collections');

  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const nonEmpty = Object.fromEntries(Object.entries(rules).filter(([, v]) => v !== undefined && v.trim() !== ''));
    try {
      if (c === null) await call(props.secret, 'POST', base, { name: name.trim(), fields, rules: nonEmpty });
      else {
        const removedFields = Object.keys(c.fields).filter((f) => !(f in fields));
        const removedRules = Object.keys(c.rules).filter((r) => !(r in nonEmpty));
        await call(props.secret, 'PATCH', `${base}/${encodeURIComponent(c.name)}`, {
          fields: { ...fields, ...Object.fromEntries(removedFields.map((f) => [f, null])) },
          rules: { ...nonEmpty, ...Object.fromEntries(removedRules.map((r) => [r, null])) },
        });
      }
      props.onDone();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <form class="panel editor" onSubmit={save} aria-label={c ? `Edit collection ${c.name}` : 'New collection'}>
      <h2>{c ? `Edit ${c.name}` : 'New collection'}</h2>
      <label>
        Collection name
        <input name="collection-name" required readOnly={c !== null} value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <fieldset>
        <legend>Fields</legend>
        {rows.map((r, i) => (
          <div class="field-row" key={i}>
            <label>
              Field name
              <input name={`field-name-${i}`} value={r.name} readOnly={r.stored} onInput={(e) => setRow(i, { name: (e.currentTarget as HTMLInputElement).value })} />
            </label>
            <label>
              Type
              <select name={`field-type-${i}`} value={r.type} disabled={r.stored} onChange={(e) => setRow(i, { type: (e.currentTarget as HTMLSelectElement).value as FieldType })}>
                {(FIELD_TYPES.includes(r.type) ? FIELD_TYPES : [...FIELD_TYPES, r.type]).map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
            {FIELD_OPTIONS.map((o) => (
              <label class="check" key={o}>
                <input type="checkbox" name={`field-${o}-${i}`} checked={!!r[o]} onChange={(e) => setRow(i, { [o]: (e.currentTarget as HTMLInputElement).checked })} />
                {o}
              </label>
            ))}
            {r.type === 'text' && (
              <label class="check">
                <input type="checkbox" name={`field-searchable-${i}`} checked={!!r.searchable} onChange={(e) => setRow(i, { searchable: (e.currentTarget as HTMLInputElement).checked })} />
                searchable
              </label>
            )}
            <button type="button" aria-label={`Remove field ${r.name || i + 1}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" onClick={() => setRows([...rows, { name: '', type: 'text', stored: false }])}>
          Add field
        </button>
      </fieldset>
      <RulesEditor project={props.project} secret={props.secret} collection={name.trim()} fields={fields} rules={rules} onChange={setRules} onProblems={setProblems} />
      <ErrorBox error={error} />
      <div class="row">
        <button type="submit" disabled={Object.keys(problems).length > 0}>
          Save collection
        </button>
        <button type="button" onClick={props.onDone}>
          Cancel
        </button>
        {c && (
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Delete collection
          </button>
        )}
      </div>
      {c && confirming && (
        <Confirm
          word={c.name}
          what={`Delete collection ${c.name} and all its records`}
          onCancel={() => setConfirming(false)}
          onConfirm={async () => {
            try {
              await call(props.secret, 'DELETE', `${base}/${encodeURIComponent(c.name)}`);
              props.onDone();
            } catch (err) {
              setError(err);
            }
          }}
        />
      )}
    </form>
  );
}
