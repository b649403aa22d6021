import type { Store } from 'express-rate-limit';
import { ForbiddenError, UnauthorizedError, type ProjectId } from '@plinth/shared';
import { FailureCount } from './failure-count';

/**
 * Wrong sign-in codes, counted per (client address, e-mail) (docs/auth.md "Limits"). Each
 * attempt counts as it starts and is given back when it succeeds, so racing attempts cannot
 * slip past the limit; once a pair has `limit` wrong codes in the window, its further attempts
 * answer 429 without being checked, right or wrong. Other addresses are untouched: a code
 * redeemed by its owner from another address is never refused because of someone else's guesses.
 */
export class CodeFailures {
  private constructor(private readonly failures: FailureCount) {}

  /** A budget backed by an express-rate-limit store (in-memory when none is given). */
  static create(store: Store | undefined, limit: number, windowMs: number): CodeFailures {
    return new CodeFailures(FailureCount.create(store, limit, windowMs));
  }

  /**
   * Runs `attempt` (which throws 401 or 403 for a wrong code) unless the pair has used its
   * budget (then 429 with Retry-After). Only wrong codes stay counted.
   */
  async guard<T>(project: ProjectId, address: string, email: string, attempt: () => Promise<T>): Promise<T> {
    await this.failures.ready;
    const key = `${project}:${address}:${email}`;
    const refused = await this.failures.add(key);
    if (refused) throw refused;
    try {
      const result = await attempt();
      await this.failures.giveBack(key);
      return result;
    } catch (err) {
      if (!(err instanceof UnauthorizedError || err instanceof ForbiddenError)) await this.failures.giveBack(key);
      throw err;
    }
  }
}
