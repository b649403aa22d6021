import { ConflictError, type ProjectId, type User } from '@plinth/shared';
import type { AuthSettings } from '../domain/auth-settings';
import type { FactorStore } from './factor-store';
import type { UserEventOutbox } from './user-event-outbox';
import type { MailOutboxStore } from './mail-outbox-store';

/**
 * A user as stored: the wire User (contract §2) with the bcrypt hash (null for a password-less
 * OTP user) in place of `has_password`. The hash never leaves the service: routes render users
 * with `toPublicUser` (domain/public-user.ts). `email` is trimmed and lower-cased, unique per
 * project; null only for an anonymous user (`is_anonymous`), and any number of users may have none.
 */
export type UserRecord = Omit<User, 'has_password'> & { password_hash: string | null };

/** Most bytes of JSON a user's custom claims may take (PATCH /users/{id} `claims`). */
export const MAX_USER_CLAIMS_BYTES = 1000;

/** What adapters throw for a taken e-mail (a unique-index violation). */
export function emailTakenError(): ConflictError {
  return new ConflictError('A user with this e-mail already exists.', {
    field: 'email',
    fields: [{ field: 'email', message: 'is taken' }],
  });
}

export type UserPatch = Partial<Omit<UserRecord, 'id' | 'created_at'>>;

/**
 * How e-mails and searched names are compared without case, on every store: JavaScript's
 * Unicode lower-casing, done by Plinth (not SQLite's ASCII-only `lower()`, not MongoDB's regex
 * case folding), so "émile" finds "Émile" on both stores and they agree in every corner.
 */
export function foldCase(s: string): string {
  return s.toLowerCase();
}

export interface UserListQuery {
  /** Case-insensitive (foldCase) substring of the e-mail or the display name. */
  search?: string;
  /** Only anonymous users (true) or only the others (false); both when absent. */
  anonymous?: boolean;
  limit: number;
  offset: number;
}

/**
 * Purpose of a one-time token. `email-change-cancel` is the link of the notice to the old
 * address: it cancels the pending change. The `oauth-` kinds are the codes of a provider sign-in
 * (flows/oauth-grants.ts): never mailed, so they have no mail slots.
 */
export type MailedTokenKind = 'verify' | 'reset' | 'email-change' | 'email-change-cancel';
export type OneTimeTokenKind = MailedTokenKind | 'oauth-state' | 'oauth-exchange' | 'oauth-link';
/** The kinds of mailed links (each has a mail slot per user). */
export const ONE_TIME_TOKEN_KINDS: readonly MailedTokenKind[] = ['verify', 'reset', 'email-change', 'email-change-cancel'];

/** The mail-throttle key of a user's mail of one kind (claimMailSlot); deleteUser deletes all of a user's. */
export function mailSlotKey(kind: OneTimeTokenKind, userId: string): string {
  return `${kind}:${userId}`;
}

export interface OneTimeToken {
  /** sha256 of the token sent by mail; the token itself is never stored. */
  token_hash: string;
  kind: OneTimeTokenKind;
  user_id: string;
  /** Epoch milliseconds. */
  expires_at: number;
  /** `email-change`: the new address, which becomes the user's e-mail when the token is consumed. */
  email?: string;
  /** `email-change`: the session that asked for the change; the change ends with it. */
  sid?: string;
  /** `oauth-` kinds: what the flow keeps with the code (JSON, at most a few kilobytes). */
  data?: string;
}

/**
 * A provider account linked to a user (docs/auth.md "Linked identities"). One per provider per
 * user; a provider account belongs to one user of the project.
 */
export interface IdentityRecord {
  provider: string;
  /** The provider's id of the account (`sub`, or GitHub's numeric user id). */
  subject: string;
  user_id: string;
  /** The address the provider gave at the last sign-in, and whether it said it was verified. */
  email: string | null;
  email_verified: boolean;
  created_at: string;
}

/** What adapters throw when the provider account, or the user's identity of that provider, is taken. */
export function identityTakenError(): ConflictError {
  return new ConflictError('This provider account is already linked.', { field: 'identity' });
}

export interface OtpIssue {
  email: string;
  /** sha256 of the code; the code itself is never stored. */
  code_hash: string;
  /** Epoch milliseconds: now, the code's expiry, and the earliest time of a previous send that still allows this one. */
  now: number;
  expires_at: number;
  resend_after: number;
}

export interface SigningKeyRecord {
  kid: string;
  /** PKCS#8 PEM of the ES256 private key. */
  private_pem: string;
  /** The public key as a JWK (kty, crv, x, y). */
  public_jwk: { [key: string]: string };
  /** Epoch milliseconds. */
  created_at: number;
  /** Epoch ms after which this key verifies nothing; null while it is the signing key. */
  verify_until: number | null;
}

/**
 * Users, one-time tokens, OTP codes, signing keys and Auth settings of every project.
 * Every method takes the project; nothing crosses projects.
 */
export interface UserStore {
  /** The users' second factors and sign-in challenges (deleted with the user and the project). */
  readonly factors: FactorStore;
  /**
   * The user events' outbox: createUser and deleteUser append their `user.created` /
   * `user.deleted` event in the same transaction as the user's write (bulk deletions append none).
   */
  readonly events: UserEventOutbox;
  /** Auth's copy of the mail jobs it puts on a Redis queue, until the queue delivered them (deleted with the project). */
  readonly mails: MailOutboxStore;
  /** Inserts a user (and its `user.created` event). Throws ConflictError when the e-mail (case-insensitive) is taken in the project. */
  createUser(project: ProjectId, user: UserRecord): Promise<void>;
  /** Null when absent. */
  getUser(project: ProjectId, id: string): Promise<UserRecord | null>;
  /** Case-insensitive. Null when absent. */
  getUserByEmail(project: ProjectId, email: string): Promise<UserRecord | null>;
  /** Applies the patch and returns the new user; null when absent. ConflictError on a taken e-mail. */
  updateUser(project: ProjectId, id: string, patch: UserPatch): Promise<UserRecord | null>;
  /**
   * Deletes the user (freeing the e-mail), their one-time tokens, their linked identities, their
   * mail-throttle slots (mailSlotKey) and their second factors and challenges, and appends its
   * `user.deleted` event, all or nothing. False (and no event) when absent.
   */
  deleteUser(project: ProjectId, id: string): Promise<boolean>;
  /** A page ordered by created_at then id, with the total number of matches. */
  listUsers(project: ProjectId, query: UserListQuery): Promise<{ users: UserRecord[]; total: number }>;

  /**
   * Deletes, in every project, the anonymous users (`is_anonymous`) whose last sign-in (or
   * refresh, see flows/anonymous.ts) is before `idleBefore` (ISO 8601), with their one-time tokens
   * and mail-throttle slots; answers how many. In steps that never hold the database long.
   */
  deleteIdleAnonymousUsers(idleBefore: string): Promise<number>;

  /** Stores a one-time token. */
  putOneTimeToken(project: ProjectId, token: OneTimeToken): Promise<void>;
  /**
   * Atomically consumes the token: returns its user id and deletes it when it exists, has this
   * kind and has not expired at `now`; null otherwise. Of two racing callers at most one wins.
   */
  consumeOneTimeToken(project: ProjectId, kind: OneTimeTokenKind, tokenHash: string, now: number): Promise<string | null>;
  /** As consumeOneTimeToken, answering the whole token (with its `email` and `sid`, when set), or null. */
  takeOneTimeToken(project: ProjectId, kind: OneTimeTokenKind, tokenHash: string, now: number): Promise<OneTimeToken | null>;
  /** Deletes every outstanding one-time token of these kinds of the user (a password change ends older reset links). */
  deleteOneTimeTokens(project: ProjectId, userId: string, kinds: readonly OneTimeTokenKind[]): Promise<void>;

  /** Links a provider account to a user. ConflictError (identityTakenError) when the account or the user's identity of that provider exists. */
  linkIdentity(project: ProjectId, identity: IdentityRecord): Promise<void>;
  /** Null when the provider account is linked to no user of the project. */
  getIdentity(project: ProjectId, provider: string, subject: string): Promise<IdentityRecord | null>;
  /** The user's identities, oldest first. */
  listIdentities(project: ProjectId, userId: string): Promise<IdentityRecord[]>;
  /** Removes the user's identity of that provider; false when there was none. */
  unlinkIdentity(project: ProjectId, userId: string, provider: string): Promise<boolean>;

  /**
   * Replaces the e-mail's OTP code (one live code per e-mail, attempts reset) unless a code was
   * sent after `resend_after`; returns false (and changes nothing) in that case. Atomic.
   */
  issueOtp(project: ProjectId, otp: OtpIssue): Promise<boolean>;
  /**
   * Spends one attempt on the e-mail's live code. Returns true and deletes the code when it
   * matches, is unexpired at `now` and fewer than `maxAttempts` attempts were made before;
   * false otherwise (a wrong guess counts). Atomic.
   */
  redeemOtp(project: ProjectId, email: string, codeHash: string, now: number, maxAttempts: number): Promise<boolean>;
  /** Deletes the e-mail's live code, if any. */
  deleteOtp(project: ProjectId, email: string): Promise<void>;

  /**
   * The mail throttle: records a send under `key` at `now` and returns true, unless a send was
   * recorded under `key` after `now - intervalMs` (then false, nothing changes). Atomic: of two
   * racing callers at most one gets true.
   */
  claimMailSlot(project: ProjectId, key: string, now: number, intervalMs: number): Promise<boolean>;

  /** Every signing key of the project, newest first (including retired ones still verifying). */
  listSigningKeys(project: ProjectId): Promise<SigningKeyRecord[]>;
  /** Adds a key. */
  addSigningKey(project: ProjectId, key: SigningKeyRecord): Promise<void>;
  /** Sets verify_until on every key other than `keepKid` that has none. */
  retireSigningKeys(project: ProjectId, keepKid: string, verifyUntil: number): Promise<void>;

  /** Null when the project never saved settings. */
  getSettings(project: ProjectId): Promise<AuthSettings | null>;
  putSettings(project: ProjectId, settings: AuthSettings): Promise<void>;

  /**
   * Deletes every user (with their password hashes), linked identity, one-time token, OTP code, mail-throttle
   * slot, second factor, sign-in challenge, signing key, user event and the settings of the project, when the project is deleted. Idempotent.
   */
  purgeProject(project: ProjectId): Promise<void>;

  /** Throws when the backing database is unreachable (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
