import type { AuditEntry } from '@plinth/protocol';
import type { OperatorSecrets } from '../operators/operator-secrets';

/** The roles of named operators (docs/operators.md "Operators, roles and sessions"): each includes the one below. */
export const OPERATOR_ROLES = ['viewer', 'admin', 'owner'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** A named operator as stored: the password only as its bcrypt hash. */
export interface OperatorRecord {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  role: OperatorRole;
  status: 'active' | 'disabled';
  password_hash: string;
  /** The TOTP secret once enrolment was confirmed, sealed (OperatorSecrets); null without a second factor. */
  totp_secret: string | null;
  /** A secret handed out by enrolment and not yet confirmed with a code, sealed like totp_secret. */
  totp_pending: string | null;
  /** The last TOTP time step accepted (a code is never accepted twice). */
  totp_last_step: number | null;
  created_at: string;
}

export type OperatorPatch = Partial<Pick<OperatorRecord, 'role' | 'status' | 'password_hash' | 'totp_secret' | 'totp_pending' | 'totp_last_step'>>;

/** An operator session: only the SHA-256 of its token is stored. */
export interface OperatorSessionRecord {
  id: string;
  operator_id: string;
  token_hash: string;
  created_at: string;
  /** Moved forward by each refresh, never past `max_expires_at`. */
  expires_at: string;
  max_expires_at: string;
  /** The client address that signed in. */
  address: string | null;
}

/** Who did something: a named operator, a project's secret key, or the bootstrap operator key. */
/** Who an audit entry names, and the entry (the wire type, as the audit API answers it). */
export type { AuditActorKind, AuditEntry } from '@plinth/protocol';

export interface AuditQuery {
  /** Matches actor_id or actor (e-mail, key prefix). */
  actor?: string;
  project?: string;
  /** ISO times, inclusive / exclusive. */
  since?: string;
  until?: string;
  /** Entries strictly older than this id (the `next_cursor` of the previous page). */
  before?: string;
  limit: number;
}

/**
 * Operators, their sessions and the audit log, kept beside projects in the gateway's project
 * store (SQLite: sqlite-operator-store.ts; MongoDB: mongo-operator-store.ts; contract:
 * gateway/test/operator-store.contract.ts).
 */
export interface OperatorStore {
  /** Seals and opens the TOTP secrets this store keeps (the key its data-version migration sealed them with). */
  readonly secrets: OperatorSecrets;

  /** Throws ConflictError when the e-mail is taken. */
  createOperator(op: OperatorRecord): Promise<void>;
  getOperator(id: string): Promise<OperatorRecord | null>;
  findOperatorByEmail(email: string): Promise<OperatorRecord | null>;
  /** Oldest first. */
  listOperators(): Promise<OperatorRecord[]>;
  /** Returns false when there is no such operator. */
  updateOperator(id: string, patch: OperatorPatch): Promise<boolean>;
  /** Deletes the operator and every session of it. */
  deleteOperator(id: string): Promise<boolean>;

  createSession(s: OperatorSessionRecord): Promise<void>;
  findSessionByHash(tokenHash: string): Promise<OperatorSessionRecord | null>;
  /** Newest first; all operators' when `operatorId` is omitted. */
  listSessions(operatorId?: string): Promise<OperatorSessionRecord[]>;
  setSessionExpiry(id: string, expiresAt: string): Promise<boolean>;
  deleteSession(id: string): Promise<boolean>;
  deleteSessionsOf(operatorId: string): Promise<number>;
  /** Removes sessions whose expiry is before `now` (ISO). */
  pruneSessions(now: string): Promise<number>;

  /** Appends entries, all at once (one transaction on SQLite, one insertMany on MongoDB). */
  appendAudit(...entries: AuditEntry[]): Promise<void>;
  /** Newest first, at most `limit`. */
  queryAudit(q: AuditQuery): Promise<AuditEntry[]>;
  /** Removes entries older than `before` (ISO); returns how many. */
  pruneAudit(before: string): Promise<number>;
}
