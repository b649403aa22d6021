import { useState } from 'preact/hooks';
import { call, projectPath } from '../api';
import type { Session } from '../session';
import { ErrorBox } from '../ui';

interface SignedIn {
  token: string;
  session: { expires_at: string };
  operator: { email: string; role: 'owner' | 'admin' | 'viewer' };
}

const value = (e: Event) => (e.currentTarget as HTMLInputElement).value;

/**
 * Sign-in: a named operator's e-mail and password (and two-factor code when enrolled); or, below,
 * a key — the bootstrap operator key (before any operator exists) or a project's secret key.
 */
export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [key, setKey] = useState('');
  const [project, setProject] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const run = async (e: Event, fn: () => Promise<void>) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const signIn = (e: Event) =>
    run(e, async () => {
      const res = await call<SignedIn>('', 'POST', '/v1/admin/sessions', { email, password, ...(code.trim() ? { code: code.trim() } : {}) });
      setPassword('');
      onSignedIn({ kind: 'operator', key: res.token, email: res.operator.email, role: res.operator.role, expiresAt: res.session.expires_at });
    });
  const withKey = (e: Event) =>
    run(e, async () => {
      if (project.trim() === '') {
        await call(key, 'GET', '/v1/admin/projects');
        onSignedIn({ kind: 'operator', key });
      } else {
        await call(key, 'GET', projectPath(project.trim(), '/collections'));
        onSignedIn({ kind: 'project', key, project: project.trim() });
      }
    });

  return (
    <main class="sign-in">
      <h1>Plinth dashboard</h1>
      <form onSubmit={signIn} aria-label="Operator sign-in">
        <label>
          E-mail
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(value(e))} />
        </label>
        <label>
          Password
          <input type="password" name="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(value(e))} />
        </label>
        <label>
          Two-factor code (only when enrolled)
          <input name="code" inputMode="numeric" autoComplete="one-time-code" value={code} onInput={(e) => setCode(value(e))} />
        </label>
        <button type="submit" disabled={busy || email === '' || password === ''}>
          Sign in
        </button>
      </form>
      <form onSubmit={withKey} aria-label="Sign in with a key">
        <h2>Or sign in with a key</h2>
        <label>
          Key (the bootstrap operator key, or a project's secret key)
          <input type="password" name="key" autoComplete="off" required value={key} onInput={(e) => setKey(value(e))} />
        </label>
        <label>
          Project id (only with a project's secret key)
          <input name="project" value={project} onInput={(e) => setProject(value(e))} />
        </label>
        <button type="submit" disabled={busy || key === ''}>
          Sign in with key
        </button>
        <p class="hint">What you sign in with is kept in this tab's session storage only and forgotten when the tab closes.</p>
      </form>
      <ErrorBox error={error} />
    </main>
  );
}
