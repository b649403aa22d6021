import type { ProjectId } from '@plinth/shared';

/**
 * A user's TOTP factor as stored (one per user). `pending` from enrollment until the first code
 * confirms it; only an `active` factor is asked for at sign-in.
 */
export interface TotpFactor {
  user_id: string;
  /** The TOTP secret, encrypted (domain/totp.ts FactorSecrets); never returned after enrollment. */
  secret_sealed: string;
  status: 'pending' | 'active';
  /** Epoch milliseconds. */
  created_at: number;
  confirmed_at: number | null;
  /** The latest time step a code was accepted for (-1: none): a code of that step or earlier is refused (no replay). */
  last_step: number;
  /** sha256 of each recovery code not used yet (domain/totp.ts recoveryCodeHash). */
  recovery_hashes: string[];
}

/** A sign-in waiting for its second factor: single use, short-lived, a few wrong codes at most. */
export interface MfaChallengeRecord {
  /** sha256 of the challenge handed to the client; the challenge itself is never stored. */
  hash: string;
  user_id: string;
  /** Epoch milliseconds. */
  expires_at: number;
}

/**
 * Second factors and sign-in challenges, kept beside the users: each UserStore has one
 * (`UserStore.factors`), and deleting a user or purging a project deletes its factors and
 * challenges with it. Every method takes the project; nothing crosses projects.
 */
export interface FactorStore {
  /** The user's factor, pending or active; null when none. */
  getFactor(project: ProjectId, userId: string): Promise<TotpFactor | null>;
  /**
   * Stores a pending factor, replacing a pending one of the user. False (nothing changes) when the
   * user already has an active factor. Atomic.
   */
  putPendingFactor(project: ProjectId, factor: TotpFactor): Promise<boolean>;
  /**
   * Activates the user's pending factor whose sealed secret is `secretSealed` (the one the code was
   * checked against), with `step` used and these recovery hashes. False when it is not pending
   * any more or was replaced meanwhile. Atomic.
   */
  activateFactor(project: ProjectId, userId: string, secretSealed: string, step: number, recoveryHashes: string[], now: number): Promise<boolean>;
  /** Records `step` as used when it is later than the active factor's last used step; false otherwise (a replay). Atomic. */
  useStep(project: ProjectId, userId: string, step: number): Promise<boolean>;
  /** Spends one recovery code of the active factor: true when its hash was there (it is removed). Atomic. */
  useRecoveryCode(project: ProjectId, userId: string, hash: string): Promise<boolean>;
  /** Deletes the user's factor (pending or active) and their challenges; false when there was no factor. */
  deleteFactor(project: ProjectId, userId: string): Promise<boolean>;

  /** Stores a sign-in challenge. */
  putChallenge(project: ProjectId, challenge: MfaChallengeRecord): Promise<void>;
  /**
   * Counts one attempt on a live challenge: its user id when it is unexpired at `now` and fewer
   * than `maxAttempts` attempts were made before; null otherwise. Atomic.
   */
  attemptChallenge(project: ProjectId, hash: string, now: number, maxAttempts: number): Promise<string | null>;
  /** Deletes the challenge: its user id when it was live at `now`, null otherwise. Of two racing callers at most one wins. */
  takeChallenge(project: ProjectId, hash: string, now: number): Promise<string | null>;
}
