import { useState } from 'preact/hooks';
import { call, projectPath } from '../api';
import type { Session } from '../session';
import { ErrorBox } from '../ui';

/** Sign-in with the operator key (all projects) or a project's secret key (with its project id). */
export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [project, setProject] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (project.trim() === '') {
        await call(key, 'GET', '/v1/admin/projects');
        onSignedIn({ kind: 'operator', key });
      } else {
        await call(key, 'GET', projectPath(project.trim(), '/collections'));
        onSignedIn({ kind: 'project', key, project: project.trim() });
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Plinth dashboard</h1>
      <form onSubmit={submit}>
        <label>
          Key (operator key, or a project's secret key)
          <input type="password" name="key" autoComplete="off" required value={key} onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          Project id (only with a project's secret key)
          <input name="project" value={project} onInput={(e) => setProject((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={busy || key === ''}>
          Sign in
        </button>
        <p class="hint">The key is kept in this tab's session storage only and forgotten when the tab closes.</p>
        <ErrorBox error={error} />
      </form>
    </main>
  );
}
