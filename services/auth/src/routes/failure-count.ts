import { MemoryStore, type Options, type Store } from 'express-rate-limit';
import { RateLimitedError } from '@plinth/shared';

/**
 * Failures counted per key within a rate window, in an express-rate-limit store (in-memory when
 * none is given): the counter under the sign-in limit per e-mail (SignInFailures) and the wrong
 * codes per client address and e-mail (CodeFailures), which differ in when they count.
 */
export class FailureCount {
  /** Resolves once the store is set up; every use waits for it. */
  readonly ready: Promise<void>;

  private constructor(
    private readonly store: Store,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {
    // Stores read only `windowMs` from the options (MemoryStore, rate-limit-redis, SQLite).
    this.ready = Promise.resolve(store.init?.({ windowMs } as Options));
  }

  static create(store: Store | undefined, limit: number, windowMs: number): FailureCount {
    return new FailureCount(store ?? new MemoryStore(), limit, windowMs);
  }

  /** Counts one against `key`: the 429 to answer when that is past the limit (Retry-After: the window's reset), else null. */
  async add(key: string): Promise<RateLimitedError | null> {
    const info = await this.store.increment(key);
    if (info.totalHits <= this.limit) return null;
    const reset = info.resetTime?.getTime() ?? Date.now() + this.windowMs;
    return new RateLimitedError(Math.max(1, Math.ceil((reset - Date.now()) / 1000)));
  }

  /** Gives back one counted against `key` (an attempt that turned out not to be a failure). */
  async giveBack(key: string): Promise<void> {
    await this.store.decrement(key);
  }
}
