import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './style.css';
import { loadSession, saveSession, type Session } from './session';
import { SignIn } from './screens/sign-in';
import { Projects } from './screens/projects';
import { Collections } from './screens/collections';
import { Records } from './screens/records';
import { Simulator } from './screens/simulator';
import { Users } from './screens/users';
import { Mail } from './screens/mail';
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
  ['live', 'Live'],
] as const;

function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const parts = useHash();
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
  const screen = parts[0] === 'p' ? (parts[2] ?? 'collections') : session.kind === 'operator' ? 'projects' : 'collections';
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
          {project &&
            SCREENS.map(([id, label]) => (
              <a key={id} href={`#/p/${encodeURIComponent(project)}/${id}`} aria-current={screen === id ? 'page' : undefined}>
                {label}
              </a>
            ))}
        </nav>
        <span class="who">{project ? `project ${project}` : 'operator'}</span>
        <button
          type="button"
          onClick={() => {
            saveSession(null);
            setSession(null);
            location.hash = '';
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        {screen === 'projects' && session.kind === 'operator' && <Projects operatorKey={session.key} />}
        {project && screen === 'collections' && <Collections project={project} />}
        {project && screen === 'records' && <Records project={project} collection={arg} />}
        {project && screen === 'simulator' && <Simulator project={project} />}
        {project && screen === 'users' && <Users project={project} />}
        {project && screen === 'mail' && <Mail project={project} />}
        {project && screen === 'live' && <Live project={project} />}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
