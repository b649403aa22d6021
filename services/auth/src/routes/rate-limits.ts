import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import { RateLimitedError, requestContext } from '@plinth/shared';
import { normalizeEmail } from '../domain/email';
import { OTP_MAX_ATTEMPTS } from '../flows/sign-in';
import { CodeFailures } from './code-failures';
import { SignInFailures } from './sign-in-failures';

/** The window of every Auth rate limit (docs/auth.md). */
export const RATE_WINDOW_MS = 5 * 60_000;

export type LimitedEndpoint = 'signin' | 'signup' | 'otp-request' | 'otp-redeem' | 'forgot' | 'refresh' | 'account' | 'anonymous' | 'mfa' | 'oauth';

export interface RateLimitOptions {
  /** Requests per IP per endpoint per window (refresh gets 5×). */
  perIp: number;
  /**
   * Requests per e-mail (sign-up) or per (IP, e-mail) pair (code and reset requests) per endpoint
   * per window; sign-in failures per e-mail.
   */
  perEmail: number;
  /**
   * A fresh store for one limiter (each limiter needs its own), e.g. a rate-limit-redis store
   * whose prefix contains `name`. Undefined: express-rate-limit's in-memory store.
   */
  makeStore?: (name: string) => Store | undefined;
}

function emailOf(req: Request): string | null {
  const email = (req.body as { email?: unknown } | undefined)?.email;
  if (typeof email !== 'string' || email.trim() === '') return null;
  return normalizeEmail(email) ?? email.trim().toLowerCase();
}

/** The client's address as the limits count it (X-Forwarded-For within `trust proxy`; IPv6 by /56). */
export function clientAddress(req: Request): string {
  return ipKeyGenerator(req.ip ?? 'unknown');
}

/** The (client address, e-mail) pair of a request with an e-mail in its body; null without one. */
function addressAndEmailOf(req: Request): string | null {
  const email = emailOf(req);
  return email === null ? null : `${clientAddress(req)}|${email}`;
}

function limiter(opts: RateLimitOptions, name: string, limit: number, key: (req: Request) => string | null): RequestHandler {
  return rateLimit({
    windowMs: RATE_WINDOW_MS,
    limit,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    store: opts.makeStore?.(name),
    skip: (req) => key(req) === null,
    keyGenerator: (req, res) => `${requestContext(res).project}:${key(req) ?? ''}`,
    handler: (req, _res, next) => {
      const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = reset ? Math.max(1, Math.ceil((reset.getTime() - Date.now()) / 1000)) : RATE_WINDOW_MS / 1000;
      next(new RateLimitedError(seconds));
    },
  });
}

/** The limiters of every limited endpoint, and the failure budget of sign-in per e-mail. */
export interface RateLimits {
  endpoints: Record<LimitedEndpoint, RequestHandler[]>;
  /** Per-e-mail sign-in limit: counts failures only (sign-in has no per-e-mail middleware). */
  signInFailures: SignInFailures;
  /** Wrong sign-in codes per (client address, e-mail): otp/redeem and code proofs; TOTP and recovery codes per (client address, user). */
  codeFailures: CodeFailures;
}

/**
 * The limits of each limited endpoint, keyed by project too, answering 429 `rate_limited` with
 * Retry-After (docs/auth.md "Limits"). Every endpoint counts per client IP. Sign-up counts per
 * e-mail too. Asking for a code or a reset mail counts per (IP, e-mail) pair: requests from
 * elsewhere never use up the owner's, and mail to one address is capped by the mail throttle,
 * not by a 429. Redeeming a code counts wrong codes per pair (CodeFailures). The client IP is
 * `req.ip`, which honours X-Forwarded-For as far as the app's `trust proxy` allows (service.ts
 * sets it to PLINTH_TRUST_PROXY hops).
 */
export function createRateLimits(opts: RateLimitOptions): RateLimits {
  const build = (endpoint: LimitedEndpoint, second?: { key: (req: Request) => string | null; name: string }): RequestHandler[] => {
    const perIp = endpoint === 'refresh' ? opts.perIp * 5 : opts.perIp;
    const handlers = [limiter(opts, `${endpoint}:ip`, perIp, clientAddress)];
    if (second) handlers.push(limiter(opts, `${endpoint}:${second.name}`, opts.perEmail, second.key));
    return handlers;
  };
  const perEmail = { key: emailOf, name: 'email' };
  const perPair = { key: addressAndEmailOf, name: 'ip-email' };
  const endpoints = {
    signin: build('signin'),
    signup: build('signup', perEmail),
    'otp-request': build('otp-request', perPair),
    'otp-redeem': build('otp-redeem'),
    forgot: build('forgot', perPair),
    refresh: build('refresh'),
    /** Self-service endpoints that check a password or code (change password/e-mail, delete, reauthenticate, link confirmations). */
    account: build('account'),
    /** Anonymous sign-in: each creates a user, so a flood from one address is refused early. */
    anonymous: build('anonymous'),
    /** The second step of a two-factor sign-in (wrong codes also count per (IP, user) in codeFailures). */
    mfa: build('mfa'),
    /** Provider sign-in starts, callbacks and exchanges: each start stores a state. */
    oauth: build('oauth'),
  };
  return {
    endpoints,
    signInFailures: SignInFailures.create(opts.makeStore?.('signin:email-failures'), opts.perEmail, RATE_WINDOW_MS),
    codeFailures: CodeFailures.create(opts.makeStore?.('code:ip-email-failures'), OTP_MAX_ATTEMPTS, RATE_WINDOW_MS),
  };
}
