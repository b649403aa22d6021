import type { ProjectId } from '@plinth/shared';

/** One ended session, as the durable log keeps it. */
export interface RevokedSession {
  project: ProjectId;
  sid: string;
  /** When it was revoked, epoch ms. */
  at: number;
}

/**
 * The durable record of revoked sessions, beside the users (SQLite `auth.db`, or the UserStore's
 * MongoDB with majority writes), for a SessionStore whose own data can be lost: Redis. Redis may
 * fail over to a replica that never received a revocation; the log is what brings it back
 * (RedisRevocationSync replays it). A revocation is acknowledged only once it is here.
 */
export interface RevocationLog {
  /** Stores the entries durably before resolving. Idempotent: a (project, sid) keeps its earliest time. */
  record(entries: RevokedSession[]): Promise<void>;
  /**
   * Entries revoked at or after `since` (ms), ordered by (time, project, sid), at most `limit`;
   * with `after` (the last entry of the previous page) the ones that follow it. An index read.
   */
  since(since: number, limit: number, after?: RevokedSession): Promise<RevokedSession[]>;
  /** Forgets entries revoked before `before` (ms): no token they could refuse is still valid. */
  prune(before: number): Promise<void>;
}
