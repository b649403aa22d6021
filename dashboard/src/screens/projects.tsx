import { useEffect, useState } from 'preact/hooks';
import { call, type KeyView, type Project } from '../api';
import { Confirm, Empty, ErrorBox, ShownOnce } from '../ui';

const admin = (p = '') => `/v1/admin/projects${p}`;

/** Projects and keys (operator key): list, create, delete with confirmation, create and revoke keys. */
export function Projects({ operatorKey }: { operatorKey: string }) {
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ id: string; public: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);

  const load = async () => {
    try {
      setProjects((await call<{ projects: Project[] }>(operatorKey, 'GET', admin())).projects);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(), []);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const body: { id?: string; name?: string } = {};
      if (id.trim()) body.id = id.trim();
      if (name.trim()) body.name = name.trim();
      const res = await call<{ project: Project; keys: { public: string; secret: string } }>(operatorKey, 'POST', admin(), body);
      setCreated({ id: res.project.id, ...res.keys });
      setId('');
      setName('');
      await load();
    } catch (err) {
      setError(err);
    }
  };

  const remove = async (project: string) => {
    setDeleting(null);
    try {
      await call(operatorKey, 'DELETE', admin(`/${encodeURIComponent(project)}`));
      if (open === project) setOpen(null);
      await load();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section aria-labelledby="projects-h">
      <h1 id="projects-h">Projects</h1>
      <form class="row" onSubmit={create} aria-label="Create a project">
        <label>
          Project id (optional)
          <input name="project-id" value={id} onInput={(e) => setId((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          Name (optional)
          <input name="project-name" value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="submit">Create project</button>
      </form>
      <ErrorBox error={error} />
      {created && (
        <div class="notice" aria-label="New project keys">
          <p>
            Project <strong>{created.id}</strong> created.
          </p>
          <ShownOnce label="Public key" value={created.public} />
          <ShownOnce label="Secret key" value={created.secret} />
        </div>
      )}
      {projects === null ? (
        <p>Loading…</p>
      ) : projects.length === 0 ? (
        <Empty>No projects yet: create one above.</Empty>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th>Id</th>
                <th>Name</th>
                <th>Created</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {projects.map((p) => (
                <tr key={p.id}>
                  <td>{p.id}</td>
                  <td>{p.name}</td>
                  <td>{p.created_at}</td>
                  <td class="actions">
                    <a href={`#/p/${encodeURIComponent(p.id)}/collections`}>Open</a>
                    <button type="button" onClick={() => setOpen(open === p.id ? null : p.id)} aria-expanded={open === p.id}>
                      Keys
                    </button>
                    <button type="button" class="danger" onClick={() => setDeleting(p.id)}>
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
          word={deleting}
          what={`Delete project ${deleting}: its keys at once, then every collection, record, user and mail of it`}
          onConfirm={() => void remove(deleting)}
          onCancel={() => setDeleting(null)}
        />
      )}
      {open && <Keys key={open} project={open} operatorKey={operatorKey} />}
    </section>
  );
}

function Keys({ project, operatorKey }: { project: string; operatorKey: string }) {
  const [keys, setKeys] = useState<KeyView[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [kind, setKind] = useState<'public' | 'secret'>('public');
  const [fresh, setFresh] = useState<{ kind: string; value: string } | null>(null);
  const base = admin(`/${encodeURIComponent(project)}`);
  const load = async () => {
    try {
      setKeys((await call<{ keys: KeyView[] }>(operatorKey, 'GET', base)).keys);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(), [project]);
  return (
    <section aria-label={`Keys of ${project}`} class="panel">
      <h2>Keys of {project}</h2>
      <form
        class="row"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            const res = await call<{ key: KeyView & { value: string } }>(operatorKey, 'POST', `${base}/keys`, { kind });
            setFresh({ kind: res.key.kind, value: res.key.value });
            await load();
          } catch (err) {
            setError(err);
          }
        }}
      >
        <label>
          Kind
          <select value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as 'public' | 'secret')}>
            <option value="public">public</option>
            <option value="secret">secret</option>
          </select>
        </label>
        <button type="submit">Create key</button>
      </form>
      {fresh && <ShownOnce label={`New ${fresh.kind} key`} value={fresh.value} />}
      <ErrorBox error={error} />
      {keys && keys.length === 0 && <Empty>No keys: this project cannot be reached until you create one.</Empty>}
      {keys && keys.length > 0 && (
        <ul class="keys">
          {keys.map((k) => (
            <li key={k.id}>
              <code>{k.prefix}…</code> {k.kind} <small>{k.created_at}</small>{' '}
              <button
                type="button"
                class="danger"
                aria-label={`Revoke key ${k.prefix}`}
                onClick={async () => {
                  try {
                    await call(operatorKey, 'DELETE', `${base}/keys/${encodeURIComponent(k.id)}`);
                    await load();
                  } catch (err) {
                    setError(err);
                  }
                }}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
