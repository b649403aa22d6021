/** Claim on an `Idempotency-Key` for one record creation. */
export interface IdempotencyClaim {
  key: string;
  /** Hash of the request body; the same key with another fingerprint is a conflict. */
  fingerprint: string;
  /** ISO time; a stored key whose expiry is at or before `now` is forgotten. */
  expiresAt: string;
  now: string;
}
