import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, isFileField, projectPath, upload, type Collection, type RecordDoc } from '../api';
import { FileCell } from './file-cells';
import { useProjectKey } from '../project-key';
import { Confirm, Empty, ErrorBox, JsonView } from '../ui';
import { RecordFields, dataOf, useFormValues, type ChosenFiles } from './record-form';
import { useRelationData } from './relation-data';
import { ApiPreview } from './api-preview';
import { QueryForm } from './query-form';
import { EditableCell, cellText } from './records-cell';
import { download, readAll, toCsv } from './records-export';
import { EMPTY_QUERY, filtered, listParams, type Query } from './records-query';

/**
 * Records: table with cursor paging and the total count, orderBy, a where builder, a search box
 * (collections with searchable fields); create, edit (409 → retry), edit a cell in place, delete;
 * CSV export of the whole query and its API preview (curl, SDK).
 */
export function Records({ project, collection }: { project: string; collection?: string }) {
  const { key, error: keyError } = useProjectKey(project);
  const [names, setNames] = useState<string[]>([]);
  const [col, setCol] = useState<Collection | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!key) return;
    call<{ collections: Collection[] }>(key, 'GET', projectPath(project, '/collections')).then(
      (r) => {
        setNames(r.collections.map((c) => c.name));
        setCol(r.collections.find((c) => c.name === collection) ?? null);
      },
      setError,
    );
  }, [key, collection]);
  if (!key) return <ErrorBox error={keyError} />;
  return (
    <section aria-labelledby="records-h">
      <h1 id="records-h">Records{col ? ` of ${col.name}` : ''}</h1>
      <label>
        Collection
        <select
          value={collection ?? ''}
          onChange={(e) => (location.hash = `#/p/${encodeURIComponent(project)}/records/${encodeURIComponent((e.currentTarget as HTMLSelectElement).value)}`)}
        >
          <option value="">Choose…</option>
          {names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      <ErrorBox error={error} />
      {names.length === 0 && <Empty>No collections yet: create one under Collections.</Empty>}
      {col && <Table key={col.name} project={project} secret={key} collection={col} />}
    </section>
  );
}

function Table({ project, secret, collection }: { project: string; secret: string; collection: Collection }) {
  const base = projectPath(project, `/collections/${encodeURIComponent(collection.name)}/records`);
  const [draft, setDraft] = useState<Query>(EMPTY_QUERY);
  const [query, setQuery] = useState<Query>(draft);
  const [pages, setPages] = useState<(string | null)[]>([null]);
  const [page, setPage] = useState<{ records: RecordDoc[]; cursor: string | null; total?: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<RecordDoc | 'new' | null>(null);
  const [newForm, setNewForm] = useState(0);
  const [deleting, setDeleting] = useState<RecordDoc | null>(null);
  const [preview, setPreview] = useState(false);
  const [exporting, setExporting] = useState<number | null>(null);
  const cursor = pages[pages.length - 1] ?? null;

  const load = async () => {
    setError(null);
    // count=true: the answer also holds the whole query's total, shown beside the pager.
    try {
      setPage(await call(secret, 'GET', `${base}?${new URLSearchParams(listParams(query, { cursor, count: true })).toString()}`));
    } catch (err) {
      setError(err);
    }
  };
  // `runs`: Apply always reads again, also when the query is unchanged (to see others' writes).
  const [runs, setRuns] = useState(0);
  useEffect(() => void load(), [JSON.stringify(query), cursor, runs]);
  const columns = ['id', ...Object.keys(collection.fields), 'version'];
  const exportCsv = async () => {
    setError(null);
    setExporting(0);
    try {
      const all = await readAll(secret, base, query, setExporting);
      download(`${collection.name}.csv`, toCsv(['id', ...Object.keys(collection.fields), 'version', 'created_at', 'updated_at'], all));
    } catch (err) {
      setError(err);
    } finally {
      setExporting(null);
    }
  };

  return (
    <div>
      <QueryForm
        collection={collection}
        draft={draft}
        onDraft={setDraft}
        onApply={() => {
          setPages([null]);
          setQuery(draft);
          setRuns((n) => n + 1);
        }}
      />
      <ErrorBox error={error} />
      <div class="row">
        <button
          type="button"
          onClick={() => {
            // A fresh, empty form on every click, also when a failed create is still open.
            setNewForm((n) => n + 1);
            setEditing('new');
          }}
        >
          New record
        </button>
        <button type="button" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" disabled={!page?.cursor} onClick={() => page?.cursor && setPages([...pages, page.cursor])}>
          Next page
        </button>
        <span aria-live="polite">
          Page {pages.length}
          {page?.total !== undefined && ` · ${page.total} ${page.total === 1 ? 'record' : 'records'}${filtered(query) ? ' match' : ''}`}
        </span>
        <button type="button" disabled={exporting !== null} onClick={() => void exportCsv()}>
          Export CSV
        </button>
        {exporting !== null && <span role="status">Exporting… {exporting} records read</span>}
        <button type="button" aria-expanded={preview} onClick={() => setPreview(!preview)}>
          API preview
        </button>
      </div>
      {preview && <ApiPreview project={project} collection={collection.name} query={query} />}
      {page && page.records.length === 0 && <Empty>No records{filtered(query) ? ' match this query' : ''}.</Empty>}
      {page && page.records.length > 0 && (
        <div class="scroll">
          <p class="hint">Double-click a field's cell (or Tab to it and press Enter) to edit it in place.</p>
          <table>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c}>{c}</th>
                ))}
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {page.records.map((r) => (
                <tr key={r.id}>
                  {columns.map((c) => {
                    const def = collection.fields[c];
                    if (def && isFileField(def)) return <td key={c}><FileCell project={project} collection={collection.name} recordId={r.id} def={def} value={r[c]} credential={secret} /></td>;
                    if (!def) return <td key={c}>{cellText(r[c])}</td>;
                    return (
                      <EditableCell
                        key={`${c}-${r.version}`}
                        record={r}
                        field={c}
                        def={def}
                        base={base}
                        secret={secret}
                        onSaved={(saved) => setPage((pg) => pg && { ...pg, records: pg.records.map((x) => (x.id === saved.id ? saved : x)) })}
                        onConflict={(err) => {
                          void load().then(() => setError(err));
                        }}
                      />
                    );
                  })}
                  <td class="actions">
                    <button type="button" aria-label={`Edit ${r.id}`} onClick={() => setEditing(r)}>
                      Edit
                    </button>
                    <button type="button" class="danger" aria-label={`Delete ${r.id}`} onClick={() => setDeleting(r)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {deleting && (
        <Confirm
          word="delete"
          what={`Delete record ${deleting.id}`}
          onCancel={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await call(secret, 'DELETE', `${base}/${encodeURIComponent(deleting.id)}?version=${deleting.version}`);
              setDeleting(null);
              await load();
            } catch (err) {
              setDeleting(null);
              setError(err);
            }
          }}
        />
      )}
      {editing && (
        <RecordEditor
          key={editing === 'new' ? `new-${newForm}` : editing.id}
          base={base}
          secret={secret}
          collection={collection}
          record={editing === 'new' ? null : editing}
          onDone={() => {
            setEditing(null);
            void load();
          }}
        />
      )}
    </div>
  );
}

/** Create or edit one record; an edit sends its version, and a 409 shows the current record to retry on. */
function RecordEditor(props: { base: string; secret: string; collection: Collection; record: RecordDoc | null; onDone: () => void }) {
  const [values, setValues] = useFormValues(props.collection, props.record ?? undefined);
  const [version, setVersion] = useState(props.record?.version ?? 0);
  const [current, setCurrent] = useState<RecordDoc | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [files, setFiles] = useState<ChosenFiles>({});
  const r = props.record;
  const related = useRelationData(props.base, props.secret, props.collection, r?.id ?? null);
  /** Creates, or saves the form's values over `onVersion` (the version the edit started from, or the current one after a 409). */
  const submit = async (onVersion: number) => {
    setError(null);
    setCurrent(null);
    setVersion(onVersion);
    try {
      const data = dataOf(props.collection, values);
      const withFiles = Object.values(files).some((l) => l.length > 0);
      if (r === null) await (withFiles ? upload(props.secret, 'POST', props.base, data, files) : call(props.secret, 'POST', props.base, { data }));
      else if (withFiles) await upload(props.secret, 'PATCH', `${props.base}/${encodeURIComponent(r.id)}?version=${onVersion}`, data, files);
      else await call(props.secret, 'PATCH', `${props.base}/${encodeURIComponent(r.id)}`, { data, version: onVersion });
      props.onDone();
    } catch (err) {
      setError(err);
      if (r && err instanceof ApiError && err.status === 409) {
        try {
          setCurrent((await call<{ record: RecordDoc }>(props.secret, 'GET', `${props.base}/${encodeURIComponent(r.id)}`)).record);
        } catch (again) {
          setError(again);
        }
      }
    }
  };
  const save = (e: Event) => {
    e.preventDefault();
    void submit(version);
  };
  return (
    <form class="panel" onSubmit={save} aria-label={r ? `Edit record ${r.id}` : 'New record'}>
      <h2>{r ? `Edit ${r.id} (version ${version})` : 'New record'}</h2>
      <RecordFields
        collection={props.collection}
        values={values}
        onChange={setValues}
        idPrefix="record"
        choices={related.choices}
        held={r ?? undefined}
        onFiles={(field, chosen) => setFiles((f) => ({ ...f, [field]: chosen }))}
      />
      {related.expanded && Object.keys(related.expanded).length > 0 && (
        <div role="region" aria-label="Related records">
          <p>Records its relations point at (those you can read):</p>
          <JsonView value={related.expanded} />
        </div>
      )}
      <ErrorBox error={error} />
      {current && (
        <div class="conflict" role="region" aria-label="Current record">
          <p>Someone changed this record since you opened it. The current record (version {current.version}):</p>
          <JsonView value={current} />
          <button type="button" onClick={() => void submit(current.version)}>
            Retry my changes on version {current.version}
          </button>
        </div>
      )}
      <div class="row">
        <button type="submit" disabled={current !== null}>
          {r ? 'Save record' : 'Create record'}
        </button>
        <button type="button" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
