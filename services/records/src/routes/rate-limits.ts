/**
 * Rate limits of the record and collection endpoints (docs/records.md, "Limits"): per project
 * and key kind, and per signed-in user, in a one-minute window, answered 429 `rate_limited` with
 * Retry-After. The counters live in Redis when REDIS_URL is set (shared by every replica, like
 * auth's limits), else in SQLite (`limits.db`, shared by every standalone worker; see
 * service.ts), or in memory when no store is given.
 */
import type { Request, RequestHandler, Response } from 'express';
import { MemoryStore, type Options, type Store } from 'express-rate-limit';
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

/** What a store answers for one hit (express-rate-limit's `ClientRateLimitInfo`). */
type Hits = Awaited<ReturnType<Store['increment']>>;

/**
 * One fixed-window limiter on an express-rate-limit `Store` (SQLite, Redis or memory), with the
 * headers express-rate-limit sets for `standardHeaders: 'draft-7'` — `RateLimit-Policy:
 * <limit>;w=<window s>` and `RateLimit: limit=…, remaining=…, reset=<s>` — and, over the
 * limit, 429 `rate_limited` with Retry-After. Not express-rate-limit's own middleware: its
 * per-request awaits, debug calls and validations measured about a sixth of a get by id.
 * `key` null: the request is not counted.
 */
function limiter(
  opts: RecordsRateLimitOptions,
  name: string,
  limit: (res: Response) => number,
  key: (res: Response) => string | null,
): RequestHandler {
  const store = opts.makeStore?.(name) ?? new MemoryStore();
  // Stores read only `windowMs` from the options (MemoryStore, rate-limit-redis, SQLite).
  void store.init?.({ windowMs: RATE_WINDOW_MS } as Options);
  const windowSeconds = Math.ceil(RATE_WINDOW_MS / 1000);
  return (_req, res, next) => {
    const k = key(res);
    if (k === null) {
      next();
      return;
    }
    const settle = (hits: Hits): void => {
      const max = limit(res);
      const reset = hits.resetTime ? Math.max(0, Math.ceil((hits.resetTime.getTime() - Date.now()) / 1000)) : windowSeconds;
      if (!res.headersSent) {
        res.setHeader('RateLimit-Policy', `${max};w=${windowSeconds}`);
        res.setHeader('RateLimit', `limit=${max}, remaining=${Math.max(max - hits.totalHits, 0)}, reset=${reset}`);
      }
      next(hits.totalHits > max ? new RateLimitedError(Math.max(1, reset)) : undefined);
    };
    let counted: Hits | Promise<Hits>;
    try {
      counted = store.increment(k);
    } catch (err) {
      next(err);
      return;
    }
    if (counted instanceof Promise) counted.then(settle, next);
    else settle(counted);
  };
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
