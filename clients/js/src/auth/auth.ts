import { PlinthError } from '../errors';
import type { CallOptions, Transport } from '../transport';
import { Mfa } from './mfa';
import { browserWindow, oauthError, oauthResult, waitForPopup, withoutOAuthResult, type Identity, type OAuthOptions } from './oauth';
import type { SessionManager } from './session-manager';
import type { AuthListener, Session, User } from './types';

export interface SignUpInput {
  email: string;
  password: string;
  displayName?: string;
}

/**
 * How the confirmer of a verification or e-mail-change link shows they also hold the account
 * (docs/auth.md "Proving an address"): then it keeps its password and sessions. Without a proof
 * the address's owner gets the account: the password set before is cleared and every session ends.
 */
export interface ConfirmOptions extends CallOptions {
  /** The account's current password. */
  password?: string;
  /** Send this client's session as the proof (default true when signed in). */
  asCurrentUser?: boolean;
}

/** A proof of the signed-in user: the current password, or a fresh one-time code (`requestOtp`). */
export type Proof = { password: string } | { code: string };

/**
 * Plinth Auth for one project: every call that starts a session stores it, and the client then
 * sends its access token with every call (`X-Auth-User-Token` here, `X-Db-User-Token` for
 * records), refreshing it before it expires.
 */
export class Auth {
  /** Two-factor sign-in: the second step of a sign-in, and the user's enrollment. */
  readonly mfa: Mfa;

  constructor(
    private readonly transport: Transport,
    /** @internal */
    readonly sessions: SessionManager,
  ) {
    this.mfa = new Mfa(transport, sessions);
  }

  private post<T>(path: string, body: unknown, opts: CallOptions, headers?: Record<string, string>): Promise<T> {
    return this.transport.request<T>({ method: 'POST', path: `/auth${path}`, body, headers, signal: opts.signal });
  }

  private async userHeaders(signal?: AbortSignal): Promise<Record<string, string> | undefined> {
    const token = await this.sessions.accessToken(signal);
    return token ? { 'X-Auth-User-Token': token } : undefined;
  }

  /** Creates a user and signs in as them (201). A taken e-mail → `ConflictError`. */
  async signUp(input: SignUpInput, opts: CallOptions = {}): Promise<Session> {
    const body = { email: input.email, password: input.password, display_name: input.displayName };
    return this.sessions.save(await this.post<Session>('/signup', body, opts), 'signed_in');
  }

  /**
   * Signs in with e-mail and password. Any failure is the same 401 `PlinthError`. A user with
   * two-factor sign-in on gets `MfaRequiredError` instead of a session: then `mfa.verify(code)`.
   */
  async signIn(email: string, password: string, opts: CallOptions = {}): Promise<Session> {
    return this.mfa.signingIn(async () => this.sessions.save(await this.post<Session>('/signin', { email, password }, opts), 'signed_in'));
  }

  /**
   * Signs in as a new anonymous user: no address, no password (201; the project's Auth setting
   * `allow_anonymous` must be on, else 403). Its access token says `anonymous: true` to rules.
   * Keep its data by upgrading it later with `upgradeAnonymous`: the user id stays the same.
   */
  async signInAnonymously(opts: CallOptions = {}): Promise<Session> {
    return this.sessions.save(await this.post<Session>('/anonymous', undefined, opts), 'signed_in');
  }

  /**
   * Gives the signed-in anonymous user an address and a password, keeping its id and so its
   * records. Sends the session's refresh token as proof (spent; the server ends every session
   * and answers a new one, which is stored). A taken address → `ConflictError` (the user stays
   * anonymous); not anonymous → 400.
   */
  async upgradeAnonymous(email: string, password: string, opts: CallOptions = {}): Promise<Session> {
    const headers = await this.requireUser(opts.signal);
    const current = await this.sessions.current();
    const body = { email, password, refresh_token: current?.refresh_token };
    return this.sessions.save(await this.post<Session>('/anonymous/upgrade', body, opts, headers), 'signed_in');
  }

  /** Mails a one-time code. Always resolves (the server reveals nothing about the address). */
  async requestOtp(email: string, opts: CallOptions = {}): Promise<void> {
    await this.post('/otp/request', { email }, opts);
  }

  /** Signs in with a mailed one-time code (`MfaRequiredError` as for `signIn`). */
  async redeemOtp(email: string, code: string, opts: CallOptions = {}): Promise<Session> {
    return this.mfa.signingIn(async () => this.sessions.save(await this.post<Session>('/otp/redeem', { email, code }, opts), 'signed_in'));
  }

  /** Refreshes now (normally automatic). Resolves to null when there is no session or it has ended. */
  async refresh(opts: CallOptions = {}): Promise<Session | null> {
    const s = await this.sessions.current();
    if (!s) return null;
    opts.signal?.throwIfAborted();
    return this.sessions.refresh(s.refresh_token);
  }

  /** Ends this session, here and in every tab sharing it. */
  async signOut(opts: CallOptions = {}): Promise<void> {
    const s = await this.sessions.current();
    if (!s) return;
    try {
      await this.post('/signout', { refresh_token: s.refresh_token }, opts);
    } finally {
      await this.sessions.clear();
    }
  }

  /** Ends every session of the user, on every device. */
  async signOutAll(opts: CallOptions = {}): Promise<void> {
    const headers = await this.userHeaders(opts.signal);
    if (!headers) return;
    try {
      await this.post('/signout-all', undefined, opts, headers);
    } finally {
      await this.sessions.clear();
    }
  }

  /** The stored session, or null when signed out. */
  session(): Promise<Session | null> {
    return this.sessions.current();
  }

  /** The signed-in user as last seen (no request), or null. */
  get currentUser(): User | null {
    return this.sessions.cached?.user ?? null;
  }

  /** Fetches the signed-in user from the server (`GET /auth/user`); null when signed out. */
  async user(opts: CallOptions = {}): Promise<User | null> {
    const headers = await this.userHeaders(opts.signal);
    if (!headers) return null;
    const res = await this.transport.request<{ user: User }>({ method: 'GET', path: '/auth/user', headers, signal: opts.signal });
    return res.user;
  }

  /** A valid access token (refreshed if needed), or null when signed out — for your own calls. */
  accessToken(opts: CallOptions = {}): Promise<string | null> {
    return this.sessions.accessToken(opts.signal);
  }

  /** Mails the signed-in user a verification link. */
  async requestVerification(opts: CallOptions = {}): Promise<void> {
    await this.post('/verify/request', undefined, opts, await this.userHeaders(opts.signal));
  }

  /**
   * Confirms an e-mail with the token from the verification link. Signed in as that account (or
   * with its `password`), it keeps its password and sessions; otherwise the account goes to the
   * address's owner. A proof that does not fit the account → 403 (the link still works).
   */
  async confirmVerification(token: string, opts: ConfirmOptions = {}): Promise<User> {
    const headers = opts.asCurrentUser === false ? undefined : await this.userHeaders(opts.signal);
    return (await this.post<{ verified: true; user: User }>('/verify/confirm', { token, password: opts.password }, opts, headers)).user;
  }

  /** Mails a password-reset link. Always resolves. */
  async requestPasswordReset(email: string, opts: CallOptions = {}): Promise<void> {
    await this.post('/password/forgot', { email }, opts);
  }

  /** Sets a new password with the token from the reset link (ends every session of the user). */
  async resetPassword(token: string, password: string, opts: CallOptions = {}): Promise<void> {
    await this.post('/password/reset', { token, password }, opts);
  }

  /** Changes the signed-in user's display name and photo (`null` clears one). */
  async updateProfile(change: { displayName?: string | null; photoUrl?: string | null }, opts: CallOptions = {}): Promise<User> {
    const headers = await this.requireUser(opts.signal);
    const body = { display_name: change.displayName, photo_url: change.photoUrl };
    const { user } = await this.transport.request<{ user: User }>({ method: 'PATCH', path: '/auth/user', body, headers, signal: opts.signal });
    await this.sessions.replaceUser(user);
    return user;
  }

  /**
   * Proves the signed-in user again (password, or a fresh code from `requestOtp`): the server
   * answers a new session signed in now, which is stored. Needed before a change that carries no
   * password of its own once the sign-in is older than the project's `reauthentication_window`
   * (such a change fails with code `reauthentication_required`). A wrong proof → 403.
   */
  async reauthenticate(proof: Proof, opts: CallOptions = {}): Promise<Session> {
    const headers = await this.requireUser(opts.signal);
    return this.sessions.save(await this.post<Session>('/reauthenticate', proof, opts, headers), 'signed_in');
  }

  /**
   * Changes the password (`currentPassword` null: a password-less user sets a first one, which
   * needs a recent sign-in, see `reauthenticate`). Every session of the user ends, this one too;
   * the new session the server answers is stored (and shared with the other tabs). A wrong
   * current password → 403.
   */
  async changePassword(currentPassword: string | null, newPassword: string, opts: CallOptions = {}): Promise<Session> {
    const headers = await this.requireUser(opts.signal);
    const body = { current_password: currentPassword ?? undefined, new_password: newPassword };
    return this.sessions.save(await this.post<Session>('/password/change', body, opts, headers), 'signed_in');
  }

  /**
   * Mails a confirmation link to a new address (and a notice with a cancel link to the old one);
   * the address changes when it is confirmed. A password-less user needs a recent sign-in (see
   * `reauthenticate`).
   */
  async changeEmail(newEmail: string, password?: string, opts: CallOptions = {}): Promise<void> {
    const headers = await this.requireUser(opts.signal);
    await this.post('/email/change', { new_email: newEmail, password }, opts, headers);
  }

  /**
   * Confirms an e-mail change with the token from the link. No session is needed, but as with
   * `confirmVerification`, only a confirmer who is signed in as the account (or gives its
   * `password`) keeps its password and sessions.
   */
  async confirmEmailChange(token: string, opts: ConfirmOptions = {}): Promise<User> {
    const headers = opts.asCurrentUser === false ? undefined : await this.userHeaders(opts.signal);
    const { user } = await this.post<{ changed: true; user: User }>('/email/confirm', { token, password: opts.password }, opts, headers);
    if (this.sessions.cached?.user.id === user.id) await this.sessions.replaceUser(user);
    return user;
  }

  /** Cancels a pending e-mail change with the token of the link in the notice to the old address; every session of the user ends. */
  async cancelEmailChange(token: string, opts: CallOptions = {}): Promise<void> {
    await this.post('/email/cancel', { token }, opts);
  }

  /**
   * Deletes the signed-in user's account, proven with the password or a fresh one-time code
   * (`null` for an anonymous user: the session's refresh token is sent instead). Every session ends (in every tab). The user's records stay: they belong to the app.
   */
  async deleteAccount(proof: Proof | null, opts: CallOptions = {}): Promise<void> {
    const headers = await this.requireUser(opts.signal);
    // An anonymous user (proof null) proves itself with its session's refresh token.
    const body = proof ?? { refresh_token: (await this.sessions.current())?.refresh_token };
    await this.transport.request({ method: 'DELETE', path: '/auth/user', body, headers, signal: opts.signal });
    await this.sessions.clear();
  }

  /**
   * Signs in with a provider configured for the project (docs/auth.md "Sign-in with a provider").
   * Redirect mode navigates away (the promise never resolves); call `completeOAuthRedirect()` on
   * the page the browser comes back to. Popup mode resolves with the session.
   */
  async signInWithOAuth(provider: string, opts: OAuthOptions = {}): Promise<Session> {
    const win = browserWindow();
    const here = new URL(win.location.href);
    const redirectTo = opts.redirectTo ?? `${here.origin}${here.pathname}`;
    const start = `${this.transport.endpoint(`/auth/oauth/${encodeURIComponent(provider)}/start`)}?redirect_to=${encodeURIComponent(redirectTo)}`;
    if (opts.mode !== 'popup') {
      win.location.assign(start);
      return new Promise<Session>(() => {});
    }
    const back = await waitForPopup(start, redirectTo, opts.timeoutMs ?? 300_000);
    const result = oauthResult(back);
    if (!result) throw oauthError('oauth_failed', 'The sign-in came back without a code.');
    if ('error' in result) throw oauthError(result.error, result.description);
    return this.exchangeOAuthCode(result.code);
  }

  /**
   * On the page a redirect sign-in came back to: trades its `code` for a session (stored), removes
   * the code from the address bar, and answers the session; null when the address carries no
   * sign-in result. An `error` there (e.g. `account_exists`) is thrown as a `PlinthError`.
   */
  async completeOAuthRedirect(url?: string, opts: CallOptions = {}): Promise<Session | null> {
    const result = oauthResult(url ?? browserWindow().location.href);
    if (!result) return null;
    if (url === undefined) browserWindow().history.replaceState(null, '', withoutOAuthResult(browserWindow().location.href));
    if ('error' in result) throw oauthError(result.error, result.description);
    return this.exchangeOAuthCode(result.code, opts);
  }

  /**
   * Trades a single-use exchange code (60 s) for a session and stores it. Used or unknown → 400
   * `invalid_grant`; a user with two-factor sign-in on → `MfaRequiredError`, as for `signIn`.
   */
  async exchangeOAuthCode(code: string, opts: CallOptions = {}): Promise<Session> {
    return this.mfa.signingIn(async () => this.sessions.save(await this.post<Session>('/oauth/exchange', { code }, opts), 'signed_in'));
  }

  /** The signed-in user's linked provider accounts. */
  async identities(opts: CallOptions = {}): Promise<Identity[]> {
    const headers = await this.requireUser(opts.signal);
    return (await this.transport.request<{ identities: Identity[] }>({ method: 'GET', path: '/auth/identities', headers, signal: opts.signal })).identities;
  }

  /** Links a provider account to the signed-in user: sends this tab to the provider (the address it comes back to carries a code for `completeOAuthRedirect`). */
  async linkIdentity(provider: string, redirectTo: string, opts: CallOptions = {}): Promise<void> {
    const headers = await this.requireUser(opts.signal);
    const { url } = await this.post<{ url: string }>(`/oauth/${encodeURIComponent(provider)}/link`, { redirect_to: redirectTo }, opts, headers);
    browserWindow().location.assign(url);
  }

  /** Unlinks a provider; refused (409) when it is the user's last way to sign in. */
  async unlinkIdentity(provider: string, opts: CallOptions = {}): Promise<void> {
    const headers = await this.requireUser(opts.signal);
    await this.transport.request({ method: 'DELETE', path: `/auth/identities/${encodeURIComponent(provider)}`, headers, signal: opts.signal });
  }

  private async requireUser(signal?: AbortSignal): Promise<Record<string, string>> {
    const headers = await this.userHeaders(signal);
    if (!headers) throw new PlinthError({ status: 401, code: 'unauthorized', message: 'No user is signed in.' });
    return headers;
  }

  /** Called on `signed_in`, `refreshed` and `signed_out`, including those of other tabs. Returns an unsubscribe function. */
  onChange(listener: AuthListener): () => void {
    return this.sessions.onChange(listener);
  }
}
