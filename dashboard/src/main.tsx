import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './style.css';
import { SESSION_ENDED, call } from './api';
import { loadSession, saveSession, type Session } from './session';
import { Audit } from './screens/audit';
import { SignIn } from './screens/sign-in';
import { Projects } from './screens/projects';
import { Collections } from './screens/collections';
import { Records } from './screens/records';
import { Simulator } from './screens/simulator';
import { Users } from './screens/users';
import { Mail } from './screens/mail';
import { Webhooks } from './screens/webhooks';
import { Live } from './screens/live';

/** Hash routes: #/projects, #/p/{project}/{screen}[/{collection}]. */
function useHash(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const on = () => setParts(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return parts;
}

const SCREENS = [
  ['collections', 'Collections'],
  ['records', 'Records'],
  ['simulator', 'Rule simulator'],
  ['users', 'Users'],
  ['mail', 'Mail'],
  ['webhooks', 'Webhooks'],
  ['live', 'Live'],
] as const;

/** Keeps a named operator's session alive while the tab is open: refreshed at two thirds of its remaining life. */
function useSessionRefresh(session: Session | null, update: (s: Session) => void): void {
  useEffect(() => {
    if (!session?.email || !session.expiresAt) return;
    const wait = Math.max(1000, ((Date.parse(session.expiresAt) - Date.now()) * 2) / 3);
    const timer = setTimeout(async () => {
      try {
        const res = await call<{ session: { expires_at: string } }>(session.key, 'POST', '/v1/admin/sessions/refresh');
        if (res.session.expires_at !== session.expiresAt) update({ ...session, expiresAt: res.session.expires_at });
      } catch {
        // An ended session shows on the next call (back to sign-in).
      }
    }, wait);
    return () => clearTimeout(timer);
  }, [session?.key, session?.expiresAt]);
}

function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const parts = useHash();
  const signOut = () => {
    saveSession(null);
    setSession(null);
    location.hash = '';
  };
  useEffect(() => {
    addEventListener(SESSION_ENDED, signOut);
    return () => removeEventListener(SESSION_ENDED, signOut);
  }, []);
  useSessionRefresh(session, (s) => {
    saveSession(s);
    setSession(s);
  });
  if (!session) {
    return (
      <SignIn
        onSignedIn={(s) => {
          saveSession(s);
          setSession(s);
          location.hash = s.kind === 'operator' ? '#/projects' : `#/p/${encodeURIComponent(s.project ?? '')}/collections`;
        }}
      />
    );
  }
  const project = parts[0] === 'p' ? parts[1] : session.kind === 'project' ? session.project : undefined;
  const screen =
    parts[0] === 'p' ? (parts[2] ?? 'collections') : parts[0] === 'audit' && session.kind === 'operator' ? 'audit' : session.kind === 'operator' ? 'projects' : 'collections';
  const who = session.kind === 'project' ? `project ${project ?? ''}` : session.email ? `${session.email} (${session.role})` : 'operator key';
  const arg = parts[3];
  return (
    <div class="shell">
      <header>
        <span class="brand">Plinth</span>
        <nav aria-label="Screens">
          {session.kind === 'operator' && (
            <a href="#/projects" aria-current={screen === 'projects' ? 'page' : undefined}>
              Projects
            </a>
          )}
          {session.kind === 'operator' && (
            <a href="#/audit" aria-current={screen === 'audit' ? 'page' : undefined}>
              Audit
            </a>
          )}
          {project &&
            SCREENS.map(([id, label]) => (
              <a key={id} href={`#/p/${encodeURIComponent(project)}/${id}`} aria-current={screen === id ? 'page' : undefined}>
                {label}
              </a>
            ))}
        </nav>
        <span class="who">
          {project && session.kind === 'operator' ? `${who} · project ${project}` : who}
          {session.role === 'viewer' && <em> — read only</em>}
        </span>
        <button
          type="button"
          onClick={() => {
            // A named operator's session ends on the server too; the key sign-ins only forget the key.
            if (session.email) void call(session.key, 'DELETE', '/v1/admin/sessions/current').catch(() => undefined);
            signOut();
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        {screen === 'projects' && session.kind === 'operator' && <Projects operatorKey={session.key} />}
        {screen === 'audit' && session.kind === 'operator' && <Audit operatorKey={session.key} />}
        {project && screen === 'collections' && <Collections project={project} />}
        {project && screen === 'records' && <Records project={project} collection={arg} />}
        {project && screen === 'simulator' && <Simulator project={project} />}
        {project && screen === 'users' && <Users project={project} />}
        {project && screen === 'mail' && <Mail project={project} />}
        {project && screen === 'webhooks' && <Webhooks project={project} />}
        {project && screen === 'live' && <Live project={project} />}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
