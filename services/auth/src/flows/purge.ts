import type { ProjectId } from '@plinth/shared';
import type { AuthContext } from './auth-context';

/**
 * The operator deleted the project: its sessions are revoked (so access tokens fail at once on
 * every service) and forgotten, then its users with their password hashes, one-time tokens,
 * OTP codes, signing keys and settings are deleted. A project created later with the same id
 * gets new signing keys: no token of the old project verifies there. The deletion is announced
 * to every process, which drops its cached keys of the project; an announcement that cannot be
 * sent fails the purge, which the gateway retries. Idempotent.
 */
export async function purgeProject(ctx: AuthContext, project: ProjectId): Promise<void> {
  await ctx.sessions.purgeProject(project, ctx.clock());
  await ctx.users.purgeProject(project);
  ctx.keys.forget(project);
  await ctx.announcements.publish({ kind: 'project-deleted', project });
}
