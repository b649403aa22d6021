import type { JsonValue } from './json';

export type UserStatus = 'active' | 'disabled';

export interface User {
  id: string;
  /** Null for an anonymous user (until it adds an address). */
  email: string | null;
  email_verified: boolean;
  display_name: string | null;
  photo_url: string | null;
  status: UserStatus;
  has_password: boolean;
  /** Signed in with `POST /auth/anonymous` and not upgraded yet: no address, no password. */
  is_anonymous: boolean;
  metadata: { [key: string]: JsonValue };
  /** Custom claims set by the project's admin; copied into the user's access tokens. */
  claims: { [name: string]: JsonValue };
  last_sign_in_at: string | null;
  created_at: string;
}

export interface Session {
  user: User;
  access_token: string;
  expires_at: string;
  expires_in: number;
  refresh_token: string;
}
