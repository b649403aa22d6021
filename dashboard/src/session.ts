/**
 * Who is signed in. Credentials live in sessionStorage only (gone when the tab closes), never in
 * a URL or in localStorage.
 */
export interface Session {
  /**
   * operator: a named operator's session token (`ops_…`; `email` and `role` set) or the bootstrap
   * operator key (all projects); project: one project's secret key.
   */
  kind: 'operator' | 'project';
  key: string;
  /** The project of a project session. */
  project?: string;
  /** A named operator's e-mail, role and session expiry. */
  email?: string;
  role?: 'owner' | 'admin' | 'viewer';
  expiresAt?: string;
}

const SESSION = 'plinth.session';

export function loadSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(SESSION);
    return raw ? (JSON.parse(raw) as Session) : null;
  } catch {
    return null;
  }
}

export function saveSession(s: Session | null): void {
  if (s === null) sessionStorage.removeItem(SESSION);
  else sessionStorage.setItem(SESSION, JSON.stringify(s));
}

/** What the session calls a project's API with: no project key is ever made for the dashboard. */
export function projectCredential(project: string): string | null {
  const s = loadSession();
  if (s?.kind === 'operator') return s.key;
  if (s?.kind === 'project' && s.project === project) return s.key;
  return null;
}
