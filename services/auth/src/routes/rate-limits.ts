import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import { RateLimitedError, requestContext } from '@plinth/shared';
import { normalizeEmail } from '../domain/email';
import { SignInFailures } from './sign-in-failures';

/** The window of every Auth rate limit (DESIGN.md §7). */
export const RATE_WINDOW_MS = 5 * 60_000;

export type LimitedEndpoint = 'signin' | 'signup' | 'otp-request' | 'otp-redeem' | 'forgot' | 'refresh' | 'account';

export interface RateLimitOptions {
  /** Requests per IP per endpoint per window (refresh gets 5×). */
  perIp: number;
  /** Requests per e-mail per endpoint per window. */
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
}

/**
 * Per-IP and per-e-mail limits for each limited endpoint, keyed by project too, answering 429
 * `rate_limited` with Retry-After. The client IP is `req.ip`, which honours X-Forwarded-For
 * as far as the app's `trust proxy` allows (service.ts sets it to PLINTH_TRUST_PROXY hops).
 */
export function createRateLimits(opts: RateLimitOptions): RateLimits {
  const build = (endpoint: LimitedEndpoint, withEmail: boolean): RequestHandler[] => {
    const perIp = endpoint === 'refresh' ? opts.perIp * 5 : opts.perIp;
    const handlers = [limiter(opts, `${endpoint}:ip`, perIp, (req) => ipKeyGenerator(req.ip ?? 'unknown'))];
    if (withEmail) handlers.push(limiter(opts, `${endpoint}:email`, opts.perEmail, emailOf));
    return handlers;
  };
  const endpoints = {
    signin: build('signin', false),
    signup: build('signup', true),
    'otp-request': build('otp-request', true),
    'otp-redeem': build('otp-redeem', true),
    forgot: build('forgot', true),
    refresh: build('refresh', false),
    /** Self-service endpoints that check a password or code (change password/e-mail, delete). */
    account: build('account', false),
  };
  return { endpoints, signInFailures: SignInFailures.create(opts.makeStore?.('signin:email-failures'), opts.perEmail, RATE_WINDOW_MS) };
}
