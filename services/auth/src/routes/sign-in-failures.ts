import { MemoryStore, type Options, type Store } from 'express-rate-limit';
import { ForbiddenError, RateLimitedError, UnauthorizedError, type ProjectId } from '@plinth/shared';

/**
 * The per-e-mail sign-in limit, counting failures only (docs/auth.md "Rate limits"). A correct
 * password is never refused because of it: an attacker who burns the budget of a victim's
 * e-mail gets 429 for every further wrong password, while the victim signs in as usual. The
 * per-IP limit is a separate middleware and applies to every request.
 */
export class SignInFailures {
  private readonly ready: Promise<void>;

  constructor(
    private readonly store: Store,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {
    // Stores read only `windowMs` from the options (MemoryStore, rate-limit-redis).
    this.ready = Promise.resolve(store.init?.({ windowMs } as Options));
  }

  /** A failure budget backed by an express-rate-limit store (in-memory when none is given). */
  static create(store: Store | undefined, limit: number, windowMs: number): SignInFailures {
    return new SignInFailures(store ?? new MemoryStore(), limit, windowMs);
  }

  /**
   * Runs `attempt` (which throws on bad credentials) and counts its failure. Once the e-mail
   * has `limit` failures in the window, a failing attempt answers 429 instead of its own error;
   * a succeeding attempt always succeeds.
   */
  async guard<T>(project: ProjectId, email: string, attempt: () => Promise<T>): Promise<T> {
    await this.ready;
    try {
      return await attempt();
    } catch (err) {
      // Bad credentials at sign-in (401) or a wrong proof on a self-service endpoint (403).
      if (!(err instanceof UnauthorizedError || err instanceof ForbiddenError)) throw err;
      const key = `${project}:${email}`;
      const info = await this.store.increment(key);
      if (info.totalHits > this.limit) {
        const reset = info.resetTime?.getTime() ?? Date.now() + this.windowMs;
        throw new RateLimitedError(Math.max(1, Math.ceil((reset - Date.now()) / 1000)));
      }
      throw err;
    }
  }
}
