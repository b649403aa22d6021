/** Who an audit entry names: a named operator, a project's secret key, or the bootstrap operator key. */
export type AuditActorKind = 'operator' | 'key' | 'bootstrap';

/** One audit entry (docs/operators.md "The audit log"). Never a secret, password, token or body value: who, what, when, from where. */
export interface AuditEntry {
  /** Time-ordered (`aud_…`): the paging cursor. */
  id: string;
  at: string;
  actor_kind: AuditActorKind;
  /** Operator id or key id; null for the bootstrap key or an unknown operator (a failed sign-in). */
  actor_id: string | null;
  /** Operator e-mail, key prefix (`sk_AbCd…`) or `bootstrap`. */
  actor: string;
  project: string | null;
  method: string;
  /** The request path without its query string. */
  path: string;
  status: number;
  address: string | null;
}

/** A project, as the operator API shows it. */
export interface Project {
  id: string;
  name: string;
  created_at: string;
}

/** A project's API key as the operator API shows it: never its value (shown once, at creation) nor its hash. */
export interface ProjectKey {
  id: string;
  kind: 'public' | 'secret';
  /** The key's first characters (`pk_AbCd`, `sk_AbCd`), to tell keys apart. */
  prefix: string;
  created_at: string;
}

/** A key hashed, as a project export carries it (and an import takes it back). */
export interface HashedProjectKey extends ProjectKey {
  hash: string;
}

export type OperatorRole = 'owner' | 'admin' | 'viewer';

/** A named operator (docs/operators.md): never the password hash or the TOTP secret. */
export interface Operator {
  id: string;
  email: string;
  role: OperatorRole;
  status: 'active' | 'disabled';
  /** Whether two-factor sign-in is on. */
  totp: boolean;
  created_at: string;
}

/** An operator session: never its token. */
export interface OperatorSession {
  id: string;
  operator_id: string;
  created_at: string;
  expires_at: string;
  max_expires_at: string;
  address: string | null;
  /** Whether it is the session of the request that listed it. */
  current: boolean;
}
