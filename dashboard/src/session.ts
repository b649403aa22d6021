/**
 * Who is signed in. Keys live in sessionStorage only (gone when the tab closes), never in a URL
 * or in localStorage.
 */
export interface Session {
  /** operator: the operator key (all projects); project: one project's secret key. */
  kind: 'operator' | 'project';
  key: string;
  /** The project of a project session. */
  project?: string;
}

const SESSION = 'plinth.session';
const SECRETS = 'plinth.secrets';

export function loadSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(SESSION);
    return raw ? (JSON.parse(raw) as Session) : null;
  } catch {
    return null;
  }
}

export function saveSession(s: Session | null): void {
  if (s === null) {
    sessionStorage.removeItem(SESSION);
    sessionStorage.removeItem(SECRETS);
  } else sessionStorage.setItem(SESSION, JSON.stringify(s));
}

/** Secret keys of projects an operator opened in this tab. */
export function projectSecret(project: string): string | null {
  const s = loadSession();
  if (s?.kind === 'project' && s.project === project) return s.key;
  const all = JSON.parse(sessionStorage.getItem(SECRETS) ?? '{}') as { [p: string]: string };
  return all[project] ?? null;
}

export function rememberSecret(project: string, key: string): void {
  const all = JSON.parse(sessionStorage.getItem(SECRETS) ?? '{}') as { [p: string]: string };
  all[project] = key;
  sessionStorage.setItem(SECRETS, JSON.stringify(all));
}
