import type { ProjectId, RevocationChecker } from '@plinth/shared';

/** One session: a refresh-token family. The refresh tokens themselves are never stored, only their sha256. */
export interface SessionInfo {
  /** The `sid` claim of the session's access tokens. */
  id: string;
  user_id: string;
  /** Epoch milliseconds. */
  created_at: number;
  /** Epoch ms after which the family is dead; every rotation moves it forward. */
  expires_at: number;
  /** Authenticator assurance level of the sign-in (2: a second factor was given); kept by every refresh. */
  aal: SessionAal;
}

/** `aal` claim of a session's access tokens: 1 (one factor) or 2 (a second factor too). */
export type SessionAal = 1 | 2;

export interface NewSession {
  id: string;
  user_id: string;
  refresh_hash: string;
  now: number;
  expires_at: number;
  /** Default 1. */
  aal?: SessionAal;
}

export interface Rotation {
  /** sha256 of the refresh token the client presented. */
  presented_hash: string;
  /** sha256 of the token that replaces it. */
  next_hash: string;
  /**
   * Opaque to the store: kept with the family for `grace_ms` and handed back when the presented
   * token is reused within that window (the service stores the new token there, encrypted with
   * a key only the holder of the presented token can derive).
   */
  next_grace: string;
  now: number;
  next_expires_at: number;
  grace_ms: number;
}

export type RotationOutcome =
  /** The presented token was the active one; `next_hash` is now active. */
  | { outcome: 'rotated'; session: SessionInfo }
  /** The presented token is the immediate parent of the active one, reused within grace_ms: nothing changed. */
  | { outcome: 'grace'; session: SessionInfo; grace: string }
  /** Any other reuse of a rotated token: the whole family has just been revoked. */
  | { outcome: 'reused'; session: SessionInfo }
  /** Unknown token, or a family that expired or was revoked. */
  | { outcome: 'invalid' };

/**
 * Sessions as refresh-token families (docs/auth.md), with revocation that other services can
 * read (`revocations`). Every method takes the project; a sid is unique across projects.
 */
export interface SessionStore {
  /** Starts a family whose active refresh token has hash `refresh_hash`. */
  create(project: ProjectId, session: NewSession): Promise<void>;
  /** Atomically rotates the family of the presented token; of two racing rotations of one token, one rotates. */
  rotate(project: ProjectId, rotation: Rotation): Promise<RotationOutcome>;
  /** The live session: null when unknown, revoked or expired at `now`. */
  getActive(project: ProjectId, sid: string, now: number): Promise<SessionInfo | null>;
  /** Revokes the family that issued this refresh token (any generation). False when unknown. */
  revokeByRefreshHash(project: ProjectId, refreshHash: string, now: number): Promise<boolean>;
  /** Revokes one session. False when unknown or already revoked. */
  revoke(project: ProjectId, sid: string, now: number): Promise<boolean>;
  /** Revokes every session of the user; returns how many were not revoked before. */
  revokeUser(project: ProjectId, userId: string, now: number): Promise<number>;
  /**
   * The project was deleted: revokes every live session (other services then refuse their
   * access tokens, as after a sign-out) and forgets every family and refresh token of the
   * project. Revocation markers are kept until they expire. Idempotent.
   */
  purgeProject(project: ProjectId, now: number): Promise<void>;
  /** Reads revocations this store wrote; a revocation is visible as soon as the revoking call resolves. */
  readonly revocations: RevocationChecker;
  /** Throws when the backing database is unreachable (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
