import { newId } from '@plinth/shared';
import type { UserRecord } from '../store/user-store';

/**
 * A new active user with the given e-mail (null: an anonymous user): unverified, no password,
 * no profile, not anonymous, unless `over` says otherwise.
 */
export function newUserRecord(email: string | null, over: Partial<UserRecord>, now: number): UserRecord {
  return {
    id: newId('usr_', now),
    email,
    email_verified: false,
    display_name: null,
    photo_url: null,
    status: 'active',
    is_anonymous: false,
    password_hash: null,
    metadata: {},
    claims: {},
    last_sign_in_at: null,
    created_at: new Date(now).toISOString(),
    ...over,
  };
}
