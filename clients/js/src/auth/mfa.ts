import { PlinthError } from '../errors';
import type { CallOptions, Transport } from '../transport';
import type { SessionManager } from './session-manager';
import type { Session } from './types';

/** A second factor as the account lists it (never its secret). */
export interface MfaFactor {
  type: 'totp';
  status: 'pending' | 'active';
  created_at: string;
  confirmed_at: string | null;
  recovery_codes_left: number;
}

/** A started enrollment: show `uri` as a QR code (or `secret` for typing) to the user's authenticator app. */
export interface MfaEnrollment {
  factor: MfaFactor;
  secret: string;
  uri: string;
}

/** What the first code gives: the factor, now on, and ten recovery codes to show the user once. */
export interface MfaConfirmation {
  factor: MfaFactor;
  recoveryCodes: string[];
  session: Session;
}

/** A second factor as the user gives it: a code from the authenticator app, or one recovery code. */
export type SecondFactor = string | { code: string } | { recoveryCode: string };

/**
 * A sign-in of a user with two-factor sign-in on (`signIn`, `redeemOtp`): no session yet. Call
 * `auth.mfa.verify(code)` with a code from the user's app (the challenge is remembered), or pass
 * `challenge` explicitly. It expires at `expiresAt` (5 minutes).
 */
export class MfaRequiredError extends PlinthError {
  readonly challenge: string;
  readonly expiresAt: string | null;

  constructor(err: PlinthError) {
    super({ status: err.status, code: err.code, message: err.message, details: err.details, requestId: err.requestId });
    this.name = 'MfaRequiredError';
    this.challenge = typeof err.details?.challenge === 'string' ? err.details.challenge : '';
    this.expiresAt = typeof err.details?.expires_at === 'string' ? err.details.expires_at : null;
  }
}

function factorBody(given: SecondFactor): { code?: string; recovery_code?: string } {
  if (typeof given === 'string') return { code: given };
  return 'code' in given ? { code: given.code } : { recovery_code: given.recoveryCode };
}

/**
 * Two-factor sign-in (TOTP) of a project's Auth (docs/auth.md "Two-factor sign-in"): the second
 * step of a sign-in, and the signed-in user's enrollment. Sessions the server answers are stored.
 */
export class Mfa {
  /** The challenge of the last sign-in that answered `mfa_required`, until it is used. */
  private pending: string | null = null;

  constructor(
    private readonly transport: Transport,
    private readonly sessions: SessionManager,
  ) {}

  /** @internal Runs a sign-in call; an `mfa_required` answer becomes MfaRequiredError and its challenge is remembered. */
  async signingIn(call: () => Promise<Session>): Promise<Session> {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof PlinthError) || err.code !== 'mfa_required') throw err;
      const required = new MfaRequiredError(err);
      this.pending = required.challenge;
      throw required;
    }
  }

  /**
   * Completes a sign-in that threw MfaRequiredError with a code (or `{recoveryCode}`); the session
   * (at `aal` 2) is stored. A wrong code → 401 (try again); too many wrong codes → 429.
   */
  async verify(given: SecondFactor, opts: CallOptions & { challenge?: string } = {}): Promise<Session> {
    const challenge = opts.challenge ?? this.pending;
    if (!challenge) throw new PlinthError({ status: 400, code: 'invalid_request', message: 'No sign-in is waiting for a second factor.' });
    const session = await this.transport.request<Session>({
      method: 'POST',
      path: '/auth/mfa/verify',
      body: { challenge, ...factorBody(given) },
      signal: opts.signal,
    });
    if (this.pending === challenge) this.pending = null;
    return this.sessions.save(session, 'signed_in');
  }

  /** The signed-in user's factors. */
  async factors(opts: CallOptions = {}): Promise<MfaFactor[]> {
    const headers = await this.userHeaders(opts.signal);
    return (await this.transport.request<{ factors: MfaFactor[] }>({ method: 'GET', path: '/auth/mfa', headers, signal: opts.signal })).factors;
  }

  /** Starts enrolling a TOTP factor (needs a recent sign-in, see `auth.reauthenticate`). */
  async enroll(opts: CallOptions = {}): Promise<MfaEnrollment> {
    const headers = await this.userHeaders(opts.signal);
    return this.transport.request<MfaEnrollment>({ method: 'POST', path: '/auth/mfa/totp/enroll', headers, signal: opts.signal });
  }

  /** Confirms the enrollment with a first code: the factor is on, and the new `aal`-2 session is stored. */
  async confirm(code: string, opts: CallOptions = {}): Promise<MfaConfirmation> {
    const headers = await this.userHeaders(opts.signal);
    const res = await this.transport.request<{ factor: MfaFactor; recovery_codes: string[]; session: Session }>({
      method: 'POST',
      path: '/auth/mfa/totp/confirm',
      body: { code },
      headers,
      signal: opts.signal,
    });
    const session = await this.sessions.save(res.session, 'signed_in');
    return { factor: res.factor, recoveryCodes: res.recovery_codes, session };
  }

  /** Turns two-factor sign-in off; an active factor needs a current code (or a recovery code). */
  async unenroll(given?: SecondFactor, opts: CallOptions = {}): Promise<void> {
    const headers = await this.userHeaders(opts.signal);
    await this.transport.request({ method: 'DELETE', path: '/auth/mfa/totp', body: given === undefined ? {} : factorBody(given), headers, signal: opts.signal });
  }

  private async userHeaders(signal?: AbortSignal): Promise<Record<string, string>> {
    const token = await this.sessions.accessToken(signal);
    if (!token) throw new PlinthError({ status: 401, code: 'unauthorized', message: 'No user is signed in.' });
    return { 'X-Auth-User-Token': token };
  }
}
