import { useEffect, useState } from 'preact/hooks';
import { call, type KeyView } from './api';
import { loadSession, projectSecret, rememberSecret } from './session';

/**
 * The secret key the dashboard uses for a project. A project session has it; an operator who
 * opens a project without one (keys are shown only once, at creation) gets a new secret key made
 * for this tab, listed with the project's keys; revoke it there when done.
 */
export async function secretFor(project: string): Promise<string> {
  const known = projectSecret(project);
  if (known) return known;
  const s = loadSession();
  if (s?.kind !== 'operator') throw new Error('This session has no key for that project.');
  const res = await call<{ key: KeyView & { value: string } }>(s.key, 'POST', `/v1/admin/projects/${encodeURIComponent(project)}/keys`, {
    kind: 'secret',
  });
  rememberSecret(project, res.key.value);
  return res.key.value;
}

export function useProjectKey(project: string): { key: string | null; error: unknown } {
  const [state, setState] = useState<{ key: string | null; error: unknown }>({ key: projectSecret(project), error: null });
  useEffect(() => {
    let live = true;
    secretFor(project).then(
      (key) => live && setState({ key, error: null }),
      (error: unknown) => live && setState({ key: null, error }),
    );
    return () => {
      live = false;
    };
  }, [project]);
  return state;
}
