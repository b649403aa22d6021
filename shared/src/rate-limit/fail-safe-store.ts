import { MemoryStore, type ClientRateLimitInfo, type Options, type Store } from 'express-rate-limit';
import { DependencyBreaker } from '../dependency-breaker';

/**
 * Rate-limit counters that fail safe, not shut: hits go to `primary` (Redis, or SQLite's
 * `limits.db`), and while it cannot count them — Redis down or hung, a full disk refusing the
 * counter writes — they are counted in this process's memory instead (express-rate-limit's
 * MemoryStore), so requests go on being limited, approximately, instead of all failing. Each
 * process then counts on its own: all of them together may let through up to one limit each.
 * A breaker keeps a primary that just failed from being asked again for a moment, so a hung
 * Redis costs one command timeout, not one per request. Whatever else the request needs from
 * the failed dependency fails on its own (a write to a full disk is still 507).
 *
 * For limits that protect capacity (records). Limits that protect accounts (auth's sign-in
 * attempts per e-mail) must not use it: there a counter that cannot be written is a 503.
 */
export class FailSafeStore implements Store {
  private readonly local = new MemoryStore();
  readonly localKeys = false;

  constructor(
    private readonly primary: Store,
    private readonly breaker: DependencyBreaker = new DependencyBreaker(),
  ) {}

  init(options: Options): void {
    this.local.init(options);
    this.primary.init?.(options);
  }

  increment(key: string): ClientRateLimitInfo | Promise<ClientRateLimitInfo> {
    if (!this.breaker.allow()) return this.local.increment(key);
    let counted: ClientRateLimitInfo | Promise<ClientRateLimitInfo>;
    try {
      counted = this.primary.increment(key);
    } catch {
      return this.fallBack(key);
    }
    if (!(counted instanceof Promise)) {
      this.breaker.succeeded();
      return counted;
    }
    return counted.then(
      (hits) => {
        this.breaker.succeeded();
        return hits;
      },
      () => this.fallBack(key),
    );
  }

  async decrement(key: string): Promise<void> {
    await this.primary.decrement(key);
  }

  async resetKey(key: string): Promise<void> {
    await this.local.resetKey(key);
    await this.primary.resetKey(key);
  }

  async shutdown(): Promise<void> {
    await this.local.shutdown();
    await this.primary.shutdown?.();
  }

  /** The primary failed (Redis away, a full disk): skip it for a while, count here meanwhile. */
  private fallBack(key: string): Promise<ClientRateLimitInfo> {
    this.breaker.failed();
    return this.local.increment(key);
  }
}
