export interface User {
  id: string;
  /** Null for an anonymous user (until `upgradeAnonymous`). */
  email: string | null;
  email_verified: boolean;
  display_name: string | null;
  photo_url: string | null;
  status: 'active' | 'disabled';
  has_password: boolean;
  /** Signed in with `signInAnonymously` and not upgraded yet. */
  is_anonymous: boolean;
  metadata: Record<string, unknown>;
  last_sign_in_at: string | null;
  created_at: string;
}

/** What sign-up, sign-in, OTP redeem and refresh answer; the client keeps it in its storage. */
export interface Session {
  user: User;
  access_token: string;
  expires_at: string;
  expires_in: number;
  refresh_token: string;
}

export type AuthEvent = 'signed_in' | 'refreshed' | 'signed_out';

export type AuthListener = (event: AuthEvent, session: Session | null) => void;
