import type { Collection, JsonValue, KeyKind, Predicate, RecordDoc } from '@plinth/shared';
import type { LookupReader } from '../rules/lookup-reader';

/** The verified user behind `X-Db-User-Token`, as rules see it (`auth.*`). */
export interface AuthInfo {
  uid: string;
  email: string | null;
  email_verified: boolean;
  claims: { [name: string]: JsonValue };
  /** Token expiry, seconds since the epoch (subscribe's expires_at). */
  exp: number;
  /** The session the token belongs to and when it was issued (seconds), when it says: what a file token issued under it is bound to. */
  sid?: string;
  iat?: number;
}

/** Everything a policy may look at besides the records themselves. */
export interface AccessContext {
  keyKind: KeyKind;
  /** null when no user token was sent. */
  auth: AuthInfo | null;
  /** `request.time`. */
  now: Date;
  /** What get() and exists() read through (rules/rule-lookups.ts); without it they deny. */
  lookups?: LookupReader;
}

/**
 * The seam between the records service and whoever decides access (docs/rules.md).
 * The records routes call exactly these methods; nothing else in the service knows about rules.
 */
export interface AccessPolicy {
  /**
   * Throws InvalidRequestError (400, with the rule name and position in `details`) when a
   * collection's rules cannot be compiled or can never become a store predicate.
   * Called whenever a collection is created or its rules change.
   */
  validateRules(collection: Pick<Collection, 'name' | 'fields' | 'rules'>): void;
  /**
   * The residual read predicate over record fields, to be ANDed with the client's `where`.
   * `true` = no restriction. `false` = the caller may read nothing (the route answers 403).
   */
  readFilter(ctx: AccessContext, collection: Collection): Predicate;
  /** Whether `data` (the record as it would be stored) may be created. */
  canCreate(ctx: AccessContext, collection: Collection, data: RecordDoc): boolean;
  /** Whether `before` may become `after`. */
  canUpdate(ctx: AccessContext, collection: Collection, before: RecordDoc, after: RecordDoc): boolean;
  /** Whether `record` may be deleted. */
  canDelete(ctx: AccessContext, collection: Collection, record: RecordDoc): boolean;
}
