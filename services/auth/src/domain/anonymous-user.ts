import { InvalidRequestError } from '@plinth/shared';
import type { UserRecord } from '../store/user-store';

/**
 * The user's address; 400 for an anonymous user, which has none: it adds an address and a
 * password together with `POST /auth/anonymous/upgrade` (a password alone could never sign in,
 * and a change of e-mail has no address to notify).
 */
export function addressOf(user: UserRecord): string {
  if (user.email === null) {
    throw new InvalidRequestError('This user is anonymous and has no e-mail address: add an address and a password with POST /auth/anonymous/upgrade.');
  }
  return user.email;
}
