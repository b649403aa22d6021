import bcrypt from 'bcrypt';
import { createHash } from 'node:crypto';
import { ForbiddenError, RateLimitedError, UnauthorizedError, newId, newSecret } from '@plinth/shared';
import { safeEqual } from '../keys';
import type { OperatorRecord, OperatorRole, OperatorSessionRecord, OperatorStore } from '../store/operator-store';
import { OPERATOR_ROLES } from '../store/operator-store';
import { operatorTotpStep } from './totp';

/** Who is calling the operator API, or acting on a project as an operator. */
export type OperatorActor =
  | { kind: 'bootstrap'; role: 'owner' }
  | { kind: 'operator'; role: OperatorRole; operator: OperatorRecord; session: OperatorSessionRecord };

export interface OperatorAuthOptions {
  /** How long a session lives without a refresh. */
  sessionTtlMs: number;
  /** The longest a session can be kept alive by refreshes. */
  sessionMaxMs: number;
  bcryptCost?: number;
  now?: () => number;
}

const TOKEN_PREFIX = 'ops_';
const TOKEN = /^ops_[A-Za-z0-9_-]{40,60}$/;
/** Failed sign-ins allowed per e-mail (and per address) in one window before 429. */
const MAX_FAILURES = 10;
const FAILURE_WINDOW_MS = 15 * 60_000;
const MAX_TRACKED = 10_000;

export const tokenHash = (token: string): string => createHash('sha256').update(`operator-session\n${token}`).digest('hex');
export const looksLikeOperatorToken = (credential: string): boolean => credential.startsWith(TOKEN_PREFIX);

/** True when `role` includes `needed` (viewer < admin < owner). */
export function roleAtLeast(role: OperatorRole, needed: OperatorRole): boolean {
  return OPERATOR_ROLES.indexOf(role) >= OPERATOR_ROLES.indexOf(needed);
}

/** A bcrypt hash that no password matches: compared against when the e-mail is unknown, so timing does not tell. */
const NO_MATCH_HASH = bcrypt.hashSync('no operator has this password', 4);

/**
 * Named operators' sign-in and short-lived sessions (docs/operators.md "Operators, roles and sessions"), and the
 * bootstrap operator key. A session token (`ops_…`) is stored as its SHA-256 only.
 */
export class OperatorAuth {
  private readonly failures = new Map<string, { count: number; until: number }>();
  private readonly now: () => number;

  constructor(
    readonly store: OperatorStore,
    private readonly adminKey: string,
    readonly opts: OperatorAuthOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  hashPassword(password: string): Promise<string> {
    return bcrypt.hash(password, this.opts.bcryptCost ?? 10);
  }

  isBootstrapKey(credential: string): boolean {
    return safeEqual(credential, this.adminKey);
  }

  /** The actor of a credential, null when it is neither the bootstrap key nor a session token; 401 for a dead session. */
  async identify(credential: string | null): Promise<OperatorActor | null> {
    if (!credential) return null;
    if (this.isBootstrapKey(credential)) return { kind: 'bootstrap', role: 'owner' };
    if (!looksLikeOperatorToken(credential)) return null;
    const session = TOKEN.test(credential) ? await this.store.findSessionByHash(tokenHash(credential)) : null;
    if (!session || Date.parse(session.expires_at) <= this.now()) {
      throw new UnauthorizedError('The operator session has expired or was revoked: sign in again.');
    }
    const operator = await this.store.getOperator(session.operator_id);
    if (!operator || operator.status !== 'active') throw new UnauthorizedError('This operator is disabled or deleted.');
    return { kind: 'operator', role: operator.role, operator, session };
  }

  /** Checks e-mail, password and (when enrolled) the TOTP code; a new session and its token. */
  async signIn(input: { email: string; password: string; code?: string }, address: string | null): Promise<{ token: string; session: OperatorSessionRecord; operator: OperatorRecord }> {
    const email = input.email.trim().toLowerCase();
    this.refuseWhenThrottled([`e:${email}`, `a:${address ?? ''}`]);
    const operator = await this.store.findOperatorByEmail(email);
    const passwordOk = await bcrypt.compare(input.password, operator?.password_hash ?? NO_MATCH_HASH);
    if (!operator || !passwordOk || operator.status !== 'active') {
      this.fail([`e:${email}`, `a:${address ?? ''}`]);
      throw new UnauthorizedError('Wrong e-mail or password, or the operator is disabled.');
    }
    if (operator.totp_secret) {
      if (!input.code) throw new UnauthorizedError('This operator has two-factor sign-in: send the code from the authenticator app too.', { code_required: true });
      // A secret that does not open (PLINTH_INTERNAL_SECRET changed) takes no code: an owner resets it.
      const stored = this.store.secrets.read(operator.id, operator.totp_secret);
      const step = stored === null ? null : operatorTotpStep(stored.secret, input.code, this.now());
      if (stored === null || step === null || (operator.totp_last_step !== null && step <= operator.totp_last_step)) {
        this.fail([`e:${email}`, `a:${address ?? ''}`]);
        throw new UnauthorizedError('Wrong or already used two-factor code.', { code_required: true });
      }
      await this.store.updateOperator(operator.id, { totp_last_step: step, ...(stored.clear ? { totp_secret: this.store.secrets.seal(operator.id, stored.secret) } : {}) });
    }
    const now = this.now();
    const token = newSecret(TOKEN_PREFIX, 32);
    const session: OperatorSessionRecord = {
      id: newId('osn_', now),
      operator_id: operator.id,
      token_hash: tokenHash(token),
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + this.opts.sessionTtlMs).toISOString(),
      max_expires_at: new Date(now + this.opts.sessionMaxMs).toISOString(),
      address,
    };
    await this.store.createSession(session);
    return { token, session, operator };
  }

  /** Moves the session's expiry to now + TTL, never past its maximum. */
  async refresh(session: OperatorSessionRecord): Promise<OperatorSessionRecord> {
    const expires = Math.min(this.now() + this.opts.sessionTtlMs, Date.parse(session.max_expires_at));
    const expires_at = new Date(expires).toISOString();
    await this.store.setSessionExpiry(session.id, expires_at);
    return { ...session, expires_at };
  }

  private refuseWhenThrottled(keys: string[]): void {
    const now = this.now();
    for (const k of keys) {
      const f = this.failures.get(k);
      if (f && f.until > now && f.count >= MAX_FAILURES) throw new RateLimitedError(Math.ceil((f.until - now) / 1000), 'Too many failed operator sign-ins; try again later.');
    }
  }

  private fail(keys: string[]): void {
    const now = this.now();
    for (const k of keys) {
      const f = this.failures.get(k);
      if (f && f.until > now) f.count++;
      else {
        if (this.failures.size >= MAX_TRACKED) this.failures.delete(this.failures.keys().next().value as string);
        this.failures.set(k, { count: 1, until: now + FAILURE_WINDOW_MS });
      }
    }
  }
}

/** Refuses an actor below `needed`. */
export function requireRole(actor: OperatorActor, needed: OperatorRole): void {
  if (!roleAtLeast(actor.role, needed)) {
    throw new ForbiddenError(`This needs the ${needed} role; this operator is ${actor.role === 'viewer' ? 'a viewer' : `an ${actor.role}`}.`, { role: actor.role, needed });
  }
}
