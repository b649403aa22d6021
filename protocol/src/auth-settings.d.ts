/** A sign-in provider as the settings API answers it: its secret is write-only, only whether one is set. */
export interface AuthProviderView {
  enabled: boolean;
  client_id: string;
  client_secret_set: boolean;
  /** Generic OpenID Connect providers: the issuer URL. */
  issuer?: string;
  /** `microsoft`: the directory (tenant) id. */
  tenant?: string;
  /** `github`: GitHub Enterprise Server's address and its API's. */
  github_url?: string;
  github_api_url?: string;
  scopes?: string[];
}

/**
 * A project's Auth settings (`GET|PATCH /v1/projects/{p}/settings/auth`, docs/auth.md).
 * `Provider`: how a provider is held — the answer's view by default; the auth service keeps its
 * own stored form (with the secret).
 */
export interface AuthSettings<Provider = AuthProviderView> {
  enabled: boolean;
  /** Seconds an access token lives, 60–86400. */
  access_token_ttl: number;
  /** Seconds a refresh-token family lives after its last use, 3600–31536000. */
  refresh_token_ttl: number;
  /** An OTP request for an unknown e-mail creates a password-less user on redeem. */
  otp_creates_users: boolean;
  send_verification_on_signup: boolean;
  /** Where links in mails lead (the mailer appends the token); null: the mailer's default. */
  redirect_url: string | null;
  /** Sender of this project's mails; null: the mailer's default. */
  mail_from: string | null;
  /**
   * Seconds a sign-in (password or code) counts as recent proof for a sensitive change that
   * carries no password or code of its own (docs/auth.md "Recent proof"), 1–86400.
   */
  reauthentication_window: number;
  /** `POST /auth/anonymous` may create anonymous users (no address, no password). */
  allow_anonymous: boolean;
  /** Sign-in providers by name (docs/auth.md "Sign-in with a provider"). */
  providers: { [name: string]: Provider };
  /** Where the browser may be sent back after a provider sign-in (origin and path; at most 20). */
  redirect_urls: string[];
}
