import { useEffect, useState } from 'preact/hooks';
import { call, type AuditEntry } from '../api';
import { Empty, ErrorBox } from '../ui';

interface Page {
  entries: AuditEntry[];
  next_cursor: string | null;
}

/** The audit log: who changed what, when and from where, newest first, filtered by actor and project. */
export function Audit({ operatorKey }: { operatorKey: string }) {
  const [actor, setActor] = useState('');
  const [project, setProject] = useState('');
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  const load = async (cursor: string | null) => {
    setError(null);
    const q = new URLSearchParams({ limit: '50' });
    if (actor.trim()) q.set('actor', actor.trim());
    if (project.trim()) q.set('project', project.trim());
    if (cursor) q.set('cursor', cursor);
    try {
      const page = await call<Page>(operatorKey, 'GET', `/v1/admin/audit?${q.toString()}`);
      setEntries((prev) => (cursor && prev ? [...prev, ...page.entries] : page.entries));
      setNext(page.next_cursor);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(null), []);

  return (
    <section aria-labelledby="audit-h">
      <h1 id="audit-h">Audit log</h1>
      <form
        class="row"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          void load(null);
        }}
      >
        <label>
          Who (e-mail, operator id, key prefix or id)
          <input name="audit-actor" value={actor} onInput={(e) => setActor((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          Project
          <input name="audit-project" value={project} onInput={(e) => setProject((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="submit">Apply</button>
      </form>
      <ErrorBox error={error} />
      {entries && entries.length === 0 && <Empty>No entries.</Empty>}
      {entries && entries.length > 0 && (
        <div class="scroll">
          <table aria-label="Audit entries">
            <thead>
              <tr>
                <th>When</th>
                <th>Who</th>
                <th>Action</th>
                <th>Status</th>
                <th>Project</th>
                <th>From</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td>{new Date(e.at).toLocaleString()}</td>
                  <td>
                    {e.actor} <small>({e.actor_kind})</small>
                  </td>
                  <td>
                    <code>
                      {e.method} {e.path}
                    </code>
                  </td>
                  <td>{e.status}</td>
                  <td>{e.project ?? ''}</td>
                  <td>{e.address ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <button type="button" onClick={() => void load(next)}>
          Older entries
        </button>
      )}
    </section>
  );
}
