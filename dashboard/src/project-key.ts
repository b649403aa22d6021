import { projectCredential } from './session';

/**
 * The credential the dashboard uses on a project's API: a project session's secret key, or the
 * operator's own session (or the operator key) — the gateway lets an operator act on any project
 * as its secret key would, within the operator's role. Nothing is created for it.
 */
export function useProjectKey(project: string): { key: string | null; error: unknown } {
  const key = projectCredential(project);
  return { key, error: key ? null : new Error('This session has no access to that project.') };
}
