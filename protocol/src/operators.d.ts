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
