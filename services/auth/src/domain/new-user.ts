import { newId } from '@plinth/shared';
import type { UserRecord } from '../store/user-store';

/** A new active user with the given e-mail: unverified, no password, no profile, unless `over` says otherwise. */
export function newUserRecord(email: string, over: Partial<UserRecord>, now: number): UserRecord {
  return {
    id: newId('usr_', now),
    email,
    email_verified: false,
    display_name: null,
    photo_url: null,
    status: 'active',
    password_hash: null,
    metadata: {},
    claims: {},
    last_sign_in_at: null,
    created_at: new Date(now).toISOString(),
    ...over,
  };
}
