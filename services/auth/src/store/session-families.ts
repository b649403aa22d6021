import type { ProjectId } from '@plinth/shared';
import type { NewSession, Rotation, RotationOutcome, SessionInfo } from './session-store';

/** A live session as the durable store lists it for a rebuild of the Redis cache. */
export interface StoredSession extends SessionInfo {
  project: ProjectId;
  /** When it was created or last rotated, epoch ms: the order of `changedSince`. */
  updated_at: number;
}

/**
 * The durable copy of every refresh-token family, beside the users (SQLite `auth.db`, or the
 * UserStore's MongoDB): the truth of who is signed in. Rotation is decided here, atomically (of
 * two racing rotations of one token, one rotates; reuse and the grace window as in
 * session-store.ts). Standalone serves it directly (EmbeddedSessionStore); a cluster puts Redis in
 * front of it as a cache (RedisSessionStore), which can be rebuilt from it at any time.
 */
export interface SessionFamilies {
  create(project: ProjectId, session: NewSession): Promise<void>;
  rotate(project: ProjectId, rotation: Rotation): Promise<RotationOutcome>;
  /** The live session: null when unknown, revoked or expired at `now`. */
  getActive(project: ProjectId, sid: string, now: number): Promise<SessionInfo | null>;
  /** Revokes the family that issued this refresh token: its sid and whether it was live; null when unknown. */
  revokeByRefreshHash(project: ProjectId, refreshHash: string, now: number): Promise<{ sid: string; live: boolean } | null>;
  /** Revokes one session; false when unknown or already revoked. */
  revoke(project: ProjectId, sid: string, now: number): Promise<boolean>;
  /** Revokes every session of the user; the sids that were live. */
  revokeUser(project: ProjectId, userId: string, now: number): Promise<string[]>;
  /** Forgets every family and refresh token of the project; the sids that were live. */
  purgeProject(project: ProjectId): Promise<string[]>;
  /**
   * Sessions live at `now` (not revoked, not expired) created or rotated at or after `since`,
   * ordered by (updated_at, project, id), at most `limit`; with `after` (the last of the
   * previous page) the ones that follow it. An index read.
   */
  changedSince(since: number, now: number, limit: number, after?: StoredSession): Promise<StoredSession[]>;
  ping(): Promise<void>;
}
