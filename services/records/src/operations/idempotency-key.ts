/**
 * The `Idempotency-Key` header of a record create or a batch (docs/records.md): its shape, and the
 * claim the write hands to the store — the key, a fingerprint of the request (the same key with
 * another request is a conflict), and when the key is forgotten.
 */
import { InvalidRequestError } from '@plinth/shared';
import { fingerprint } from '../domain/canonical-json';
import type { IdempotencyClaim } from '../store/idempotency-claim';

/** Idempotency keys are remembered this long (docs/records.md). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Refuses (400) a key that is not 1–255 printable ASCII characters; absent is fine. */
export function checkIdempotencyKey(key: string | undefined): void {
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw new InvalidRequestError('Idempotency-Key must be 1–255 printable ASCII characters.', { header: 'Idempotency-Key' });
  }
}

/**
 * The claim of a checked key for `request` (what the caller asked, with the signed-in user, so
 * another user's key never replays this answer), made at `now`.
 */
export function idempotencyClaim(key: string, request: unknown, now: Date): IdempotencyClaim {
  return {
    key,
    fingerprint: fingerprint(request),
    now: now.toISOString(),
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS).toISOString(),
  };
}
