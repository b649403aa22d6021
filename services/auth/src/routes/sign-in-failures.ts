import type { Store } from 'express-rate-limit';
import { ForbiddenError, UnauthorizedError, type ProjectId } from '@plinth/shared';
import { FailureCount } from './failure-count';

/**
 * The per-e-mail sign-in limit, counting failures only (docs/auth.md "Rate limits"). A correct
 * password is never refused because of it: an attacker who burns the budget of a victim's
 * e-mail gets 429 for every further wrong password, while the victim signs in as usual. The
 * per-IP limit is a separate middleware and applies to every request.
 */
export class SignInFailures {
  private constructor(private readonly failures: FailureCount) {}

  /** A failure budget backed by an express-rate-limit store (in-memory when none is given). */
  static create(store: Store | undefined, limit: number, windowMs: number): SignInFailures {
    return new SignInFailures(FailureCount.create(store, limit, windowMs));
  }

  /**
   * Runs `attempt` (which throws on bad credentials) and counts its failure. Once the e-mail
   * has `limit` failures in the window, a failing attempt answers 429 instead of its own error;
   * a succeeding attempt always succeeds.
   */
  async guard<T>(project: ProjectId, email: string, attempt: () => Promise<T>): Promise<T> {
    await this.failures.ready;
    try {
      return await attempt();
    } catch (err) {
      // Bad credentials at sign-in (401) or a wrong proof on a self-service endpoint (403).
      if (!(err instanceof UnauthorizedError || err instanceof ForbiddenError)) throw err;
      throw (await this.failures.add(`${project}:${email}`)) ?? err;
    }
  }
}
