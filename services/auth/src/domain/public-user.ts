import type { User } from '@plinth/shared';
import type { UserRecord } from '../store/user-store';

/** The user as clients see it (contract §2): no password, no hash, `has_password` instead. */
export function toPublicUser(u: UserRecord): User {
  return {
    id: u.id,
    email: u.email,
    email_verified: u.email_verified,
    display_name: u.display_name,
    photo_url: u.photo_url,
    status: u.status,
    has_password: u.password_hash !== null,
    is_anonymous: u.is_anonymous,
    metadata: u.metadata,
    claims: u.claims ?? {},
    last_sign_in_at: u.last_sign_in_at,
    created_at: u.created_at,
  };
}
