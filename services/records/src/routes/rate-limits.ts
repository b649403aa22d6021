/**
 * Rate limits of the record and collection endpoints (docs/records.md, "Limits"), in one-minute
 * windows, answered 429 `rate_limited` with Retry-After. They fit callers, not keys:
 *
 * - a secret-key request counts against its key;
 * - a public-key request of a signed-in user counts against that user, then against the
 *   project's public-key ceiling;
 * - an anonymous public-key request counts against its client address (as the gateway trusts
 *   it), then against the project's anonymous ceiling, then against the public-key ceiling.
 *
 * A request refused by one counter is not counted by the next, and the anonymous ceiling is
 * lower than the public-key ceiling, so anonymous callers together can never spend the whole
 * project's budget: signed-in users always keep the difference. The counters live in Redis when
 * REDIS_URL is set (shared by every replica), else in SQLite (`limits.db`, shared by every
 * standalone worker; see service.ts), or in memory when no store is given.
 */
import type { RequestHandler, Response } from 'express';
import { MemoryStore, ipKeyGenerator, type Options, type Store } from 'express-rate-limit';
import { DB_USER_TOKEN_HEADER, PlinthError, RateLimitedError, UnavailableError, requestContext } from '@plinth/shared';

export const RATE_WINDOW_MS = 60_000;
const WINDOW_SECONDS = Math.ceil(RATE_WINDOW_MS / 1000);

export interface RecordsRateLimitOptions {
  /** Requests per window per secret key. */
  perSecretKey: number;
  /** Requests per window per project with its public key, signed-in and anonymous together (the backstop). */
  perPublicKey: number;
  /** Anonymous public-key requests per window per project; lower than perPublicKey. */
  perAnonymous: number;
  /** Anonymous public-key requests per window per client address of a project. */
  perAddress: number;
  /** Requests per window per signed-in user of a project. */
  perUser: number;
  /** A fresh store for one counter (Redis or SQLite, see service.ts), or undefined for memory. */
  makeStore?: (name: string) => Store | undefined;
}

/** The counters, by the name their store is made with (it prefixes their keys). */
export const COUNTERS = ['key', 'user', 'address', 'anonymous', 'project'] as const;
export type CounterName = (typeof COUNTERS)[number];

/** What a store answers for one hit (express-rate-limit's `ClientRateLimitInfo`). */
type Hits = Awaited<ReturnType<Store['increment']>>;

interface Counter {
  store: Store;
  limit: number;
}

/** One hit to count: a counter and the key it is counted under. */
interface Step {
  counter: Counter;
  key: string;
}

/** A counter store that cannot be reached fails closed: 503, not 500 and not unlimited. */
function storeFailure(err: unknown): unknown {
  return err === undefined || err instanceof PlinthError ? err : new UnavailableError('Rate limits cannot be checked right now.');
}

function secondsLeft(hits: Hits): number {
  return hits.resetTime ? Math.max(0, Math.ceil((hits.resetTime.getTime() - Date.now()) / 1000)) : WINDOW_SECONDS;
}

function setHeaders(res: Response, limit: number, hits: Hits): void {
  if (res.headersSent) return;
  res.setHeader('RateLimit-Policy', `${limit};w=${WINDOW_SECONDS}`);
  res.setHeader('RateLimit', `limit=${limit}, remaining=${Math.max(limit - hits.totalHits, 0)}, reset=${secondsLeft(hits)}`);
}

/** True (and `done` called with 429) when `hits` is over the step's limit. */
function refused(res: Response, step: Step, hits: Hits, done: (err?: unknown) => void): boolean {
  if (hits.totalHits <= step.counter.limit) return false;
  setHeaders(res, step.counter.limit, hits);
  done(new RateLimitedError(Math.max(1, secondsLeft(hits))));
  return true;
}

/**
 * Counts `steps` one after the other from `from`, stopping at the first over its limit (429).
 * Sets the headers express-rate-limit sets for `standardHeaders: 'draft-7'` —
 * `RateLimit-Policy: <limit>;w=<window s>` and `RateLimit: limit=…, remaining=…, reset=<s>` —
 * of the counter that refused, or else of the one with the least left (`best`). Stays
 * synchronous, without a closure, while the stores answer synchronously (SQLite's batched
 * counters): not express-rate-limit's own middleware, whose per-request awaits, debug calls and
 * validations measured about a sixth of a get by id.
 */
function count(res: Response, steps: Step[], done: (err?: unknown) => void, from = 0, best: Step | null = null, bestHits: Hits | null = null): void {
  for (let i = from; i < steps.length; i++) {
    const step = steps[i]!;
    let counted: Hits | Promise<Hits>;
    try {
      counted = step.counter.store.increment(step.key);
    } catch (err) {
      done(storeFailure(err));
      return;
    }
    if (counted instanceof Promise) {
      counted.then(
        (hits) => {
          if (refused(res, step, hits, done)) return;
          const tighter = !best || step.counter.limit - hits.totalHits < best.counter.limit - bestHits!.totalHits;
          count(res, steps, done, i + 1, tighter ? step : best, tighter ? hits : bestHits);
        },
        (err: unknown) => done(storeFailure(err)),
      );
      return;
    }
    if (refused(res, step, counted, done)) return;
    if (!best || step.counter.limit - counted.totalHits < best.counter.limit - bestHits!.totalHits) {
      best = step;
      bestHits = counted;
    }
  }
  if (best) setHeaders(res, best.counter.limit, bestHits!);
  done();
}

export interface RecordsRateLimits {
  /**
   * Middleware on every record and collection request: counts a secret-key request against its
   * key and an anonymous public-key request against its address and the project's ceilings. A
   * public-key request with a user token is left to `user` or `anonymous`, once its route knows
   * whether the token is good.
   */
  admit: RequestHandler;
  /** Counts a left request as the signed-in user `uid`'s; rejects with RateLimitedError over a limit. */
  user: (res: Response, uid: string) => Promise<void>;
  /** Counts a left request as anonymous (its token was refused, or its route reads none). */
  anonymous: (res: Response) => Promise<void>;
}

/** Addresses seen lately and what they count as (parsing an IPv6 address costs a few µs). */
const addressKeys = new Map<string, string>();

/**
 * What an address counts as: itself for IPv4 (IPv4-mapped IPv6 too), its /56 network for IPv6
 * (express-rate-limit's ipKeyGenerator), as one client can pick any of its network's addresses.
 */
function addressKey(address: string): string {
  let key = addressKeys.get(address);
  if (key === undefined) {
    if (addressKeys.size >= 10_000) addressKeys.clear();
    key = ipKeyGenerator(address);
    addressKeys.set(address, key);
  }
  return key;
}

/** res.locals flag: admit left this request to `user` or `anonymous`. */
const LEFT = 'rateLimitLeft';

export function createRecordsRateLimits(opts: RecordsRateLimitOptions): RecordsRateLimits {
  const counter = (name: CounterName, limit: number): Counter => {
    const store = opts.makeStore?.(name) ?? new MemoryStore();
    // Stores read only `windowMs` from the options (MemoryStore, rate-limit-redis, SQLite).
    void store.init?.({ windowMs: RATE_WINDOW_MS } as Options);
    return { store, limit };
  };
  const key = counter('key', opts.perSecretKey);
  const user = counter('user', opts.perUser);
  const address = counter('address', opts.perAddress);
  const anonymous = counter('anonymous', opts.perAnonymous);
  const project = counter('project', opts.perPublicKey);

  /** Every key starts with the project (purges and the test harness delete `<name>:<project>:*`). */
  const anonymousSteps = (res: Response): Step[] => {
    const ctx = requestContext(res);
    const ceilings = [
      { counter: anonymous, key: `${ctx.project}:all` },
      { counter: project, key: `${ctx.project}:all` },
    ];
    // Without an address (a service calling on a client's behalf) only the ceilings count.
    return ctx.clientAddress === undefined ? ceilings : [{ counter: address, key: `${ctx.project}:${addressKey(ctx.clientAddress)}` }, ...ceilings];
  };
  const countLeft = (res: Response, steps: () => Step[]): Promise<void> => {
    const locals = res.locals as { [LEFT]?: boolean };
    if (!locals[LEFT]) return Promise.resolve();
    locals[LEFT] = false;
    return new Promise((resolve, reject) => count(res, steps(), (err) => (err ? reject(err) : resolve())));
  };

  return {
    admit: (req, res, next) => {
      const ctx = requestContext(res);
      if (ctx.keyKind === 'secret') {
        count(res, [{ counter: key, key: `${ctx.project}:${ctx.keyId ?? 'secret'}` }], next);
      } else if (req.headers[DB_USER_TOKEN_HEADER] !== undefined) {
        (res.locals as { [LEFT]?: boolean })[LEFT] = true;
        next();
      } else {
        count(res, anonymousSteps(res), next);
      }
    },
    user: (res, uid) => {
      const ctx = requestContext(res);
      return countLeft(res, () => [
        { counter: user, key: `${ctx.project}:${uid}` },
        { counter: project, key: `${ctx.project}:all` },
      ]);
    },
    anonymous: (res) => countLeft(res, () => anonymousSteps(res)),
  };
}
