/**
 * Rate limits of the record and collection endpoints (docs/records.md, "Limits"): per project
 * and key kind, and per signed-in user, in a one-minute window, answered 429 `rate_limited` with
 * Retry-After. The counters live in Redis when REDIS_URL is set (shared by every replica, like
 * auth's limits), else in this process.
 */
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { PlinthError, RateLimitedError, UnavailableError, requestContext } from '@plinth/shared';

export const RATE_WINDOW_MS = 60_000;

export interface RecordsRateLimitOptions {
  /** Requests per window per project with its public key. */
  perPublicKey: number;
  /** Requests per window per project with its secret key. */
  perSecretKey: number;
  /** Requests per window per signed-in user of a project. */
  perUser: number;
  /** A fresh store for one limiter (a rate-limit-redis store), or undefined for memory. */
  makeStore?: (name: string) => Store | undefined;
}

function limiter(
  opts: RecordsRateLimitOptions,
  name: string,
  limit: (res: Response) => number,
  key: (res: Response) => string | null,
): RequestHandler {
  return rateLimit({
    windowMs: RATE_WINDOW_MS,
    limit: (_req, res) => limit(res),
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    store: opts.makeStore?.(name),
    skip: (_req, res) => key(res) === null,
    keyGenerator: (_req, res) => key(res) ?? '',
    handler: (req, _res, next) => {
      const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = reset ? Math.max(1, Math.ceil((reset.getTime() - Date.now()) / 1000)) : RATE_WINDOW_MS / 1000;
      next(new RateLimitedError(seconds));
    },
  });
}

export interface RecordsRateLimits {
  /** Middleware: the project-and-key-kind limit (every record and collection request). */
  perKey: RequestHandler;
  /** Counts one request of the signed-in user `uid`; rejects with RateLimitedError over the limit. */
  perUser: (req: Request, res: Response, uid: string) => Promise<void>;
}

/** A counter store that cannot be reached fails closed: 503, not 500 and not unlimited. */
function storeFailure(err: unknown): unknown {
  return err === undefined || err instanceof PlinthError ? err : new UnavailableError('Rate limits cannot be checked right now.');
}

export function createRecordsRateLimits(opts: RecordsRateLimitOptions): RecordsRateLimits {
  const perKey = limiter(
    opts,
    'key',
    (res) => (requestContext(res).keyKind === 'secret' ? opts.perSecretKey : opts.perPublicKey),
    (res) => {
      const ctx = requestContext(res);
      return `${ctx.project}:${ctx.keyKind}`;
    },
  );
  const user = limiter(
    opts,
    'user',
    () => opts.perUser,
    (res) => {
      const uid = (res.locals as { rateLimitUser?: string }).rateLimitUser;
      return uid === undefined ? null : `${requestContext(res).project}:${uid}`;
    },
  );
  return {
    perKey: (req, res, next) => {
      void perKey(req, res, (err?: unknown) => next(storeFailure(err)));
    },
    perUser: (req, res, uid) =>
      new Promise((resolve, reject) => {
        (res.locals as { rateLimitUser?: string }).rateLimitUser = uid;
        void user(req, res, (err?: unknown) => (err ? reject(storeFailure(err)) : resolve()));
      }),
  };
}
