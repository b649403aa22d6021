/**
 * Remembers that a dependency (Redis, a disk that refuses writes) failed, so that callers with a
 * fallback use it at once instead of each waiting for its own call to fail (a hung Redis takes
 * the whole command timeout, REDIS_COMMAND_TIMEOUT_MS). After a failure the dependency is
 * skipped for `retryMs`; then one call (the probe) is let through, and the others keep skipping
 * it until the probe succeeds.
 *
 * Only for callers that have a fallback: a request that cannot do without the dependency (a
 * session check) still calls it and answers 503 on failure.
 */
export interface DependencyBreakerOptions {
  /** How long the dependency is skipped after a failure (ms, default 2000). */
  retryMs?: number;
  /** Known to be down without trying (e.g. a Redis client that is not connected). */
  isDown?: () => boolean;
  now?: () => number;
}

export class DependencyBreaker {
  private state: 'closed' | 'open' | 'probing' = 'closed';
  private retryAt = 0;
  private readonly retryMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: DependencyBreakerOptions = {}) {
    this.retryMs = opts.retryMs ?? 2000;
    this.now = opts.now ?? Date.now;
  }

  /** Whether to call the dependency now; when true, report the outcome with succeeded() or failed(). */
  allow(): boolean {
    if (this.state === 'closed') return !this.opts.isDown?.();
    if (this.state === 'probing' || this.now() < this.retryAt || this.opts.isDown?.()) return false;
    this.state = 'probing';
    return true;
  }

  succeeded(): void {
    this.state = 'closed';
  }

  failed(): void {
    this.state = 'open';
    this.retryAt = this.now() + this.retryMs;
  }

  /** True while the dependency is being skipped. */
  get skipping(): boolean {
    return this.state !== 'closed' || this.opts.isDown?.() === true;
  }
}
