import { MemoryStore, type Options, type Store } from 'express-rate-limit';
import { ForbiddenError, RateLimitedError, UnauthorizedError, type ProjectId } from '@plinth/shared';

/**
 * Wrong sign-in codes, counted per (client address, e-mail) (docs/auth.md "Limits"). Each
 * attempt counts as it starts and is given back when it succeeds, so racing attempts cannot
 * slip past the limit; once a pair has `limit` wrong codes in the window, its further attempts
 * answer 429 without being checked, right or wrong. Other addresses are untouched: a code
 * redeemed by its owner from another address is never refused because of someone else's guesses.
 */
export class CodeFailures {
  private readonly ready: Promise<void>;

  constructor(
    private readonly store: Store,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {
    // Stores read only `windowMs` from the options (MemoryStore, rate-limit-redis, SQLite).
    this.ready = Promise.resolve(store.init?.({ windowMs } as Options));
  }

  /** A budget backed by an express-rate-limit store (in-memory when none is given). */
  static create(store: Store | undefined, limit: number, windowMs: number): CodeFailures {
    return new CodeFailures(store ?? new MemoryStore(), limit, windowMs);
  }

  /**
   * Runs `attempt` (which throws 401 or 403 for a wrong code) unless the pair has used its
   * budget (then 429 with Retry-After). Only wrong codes stay counted.
   */
  async guard<T>(project: ProjectId, address: string, email: string, attempt: () => Promise<T>): Promise<T> {
    await this.ready;
    const key = `${project}:${address}:${email}`;
    const info = await this.store.increment(key);
    if (info.totalHits > this.limit) {
      const reset = info.resetTime?.getTime() ?? Date.now() + this.windowMs;
      throw new RateLimitedError(Math.max(1, Math.ceil((reset - Date.now()) / 1000)));
    }
    try {
      const result = await attempt();
      await this.store.decrement(key);
      return result;
    } catch (err) {
      if (!(err instanceof UnauthorizedError || err instanceof ForbiddenError)) await this.store.decrement(key);
      throw err;
    }
  }
}
