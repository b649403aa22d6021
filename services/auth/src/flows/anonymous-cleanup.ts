import { CleanupSchedule, type ProjectId } from '@plinth/shared';
import type { UserRecord, UserStore } from '../store/user-store';

/** How often a sign-in may start a removal of idle anonymous users. */
export const ANONYMOUS_CLEANUP_EVERY_MS = 60 * 60_000;
/** A refresh moves an anonymous user's last_sign_in_at forward at most this often (one write a day, not one per refresh). */
export const ANONYMOUS_ACTIVITY_STEP_MS = 24 * 60 * 60_000;

/**
 * Anonymous users nobody used for `maxIdleMs` (PLINTH_ANONYMOUS_MAX_IDLE_DAYS) are removed:
 * a sign-in starts the removal (CleanupSchedule: at most once an hour per process, never failing
 * the sign-in), and the store deletes in steps. "Used" is the last sign-in, or for an anonymous
 * user also the last refresh of its session (noteActivity), so an app that keeps its anonymous
 * user signed in keeps it.
 */
export class AnonymousCleanup {
  private readonly schedule: CleanupSchedule;

  constructor(
    private readonly users: UserStore,
    readonly maxIdleMs: number,
  ) {
    this.schedule = new CleanupSchedule(ANONYMOUS_CLEANUP_EVERY_MS, (now) => this.removeIdle(now).then(() => undefined));
  }

  /** Starts a removal when none ran in the last hour; returns at once. */
  maybeRun(now: number): void {
    this.schedule.maybeRun(now);
  }

  /** Removes every anonymous user idle since before `now - maxIdleMs`; answers how many. */
  removeIdle(now: number): Promise<number> {
    return this.users.deleteIdleAnonymousUsers(new Date(now - this.maxIdleMs).toISOString());
  }

  /** A refresh of an anonymous user's session: its last_sign_in_at moves to `now` when a day or more old. */
  async noteActivity(project: ProjectId, user: UserRecord, now: number): Promise<void> {
    if (!user.is_anonymous) return;
    const last = user.last_sign_in_at === null ? 0 : Date.parse(user.last_sign_in_at);
    if (now - last < ANONYMOUS_ACTIVITY_STEP_MS) return;
    await this.users.updateUser(project, user.id, { last_sign_in_at: new Date(now).toISOString() });
  }
}
