/**
 * A token bucket: holds at most `capacity` tokens and gains `perSecond` of them per second.
 * O(1) per call (no timer): it refills from the time elapsed when it is asked.
 */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    readonly capacity: number,
    readonly perSecond: number,
    now = Date.now(),
  ) {
    this.tokens = capacity;
    this.at = now;
  }

  private refill(now: number): void {
    if (now > this.at) {
      this.tokens = Math.min(this.capacity, this.tokens + ((now - this.at) * this.perSecond) / 1000);
      this.at = now;
    }
  }

  /** True when `n` tokens are there (takes none). */
  has(n: number, now = Date.now()): boolean {
    this.refill(now);
    return this.tokens >= n;
  }

  /** Takes `n` tokens when they are there; false (and takes none) otherwise. */
  take(n = 1, now = Date.now()): boolean {
    this.refill(now);
    if (this.tokens < n) return false;
    this.tokens -= n;
    return true;
  }

  /** Takes `n` tokens whatever is there: what was already spent (the bucket may go below zero). */
  spend(n: number, now = Date.now()): void {
    this.refill(now);
    this.tokens -= n;
  }

  /** True when the bucket is full again (nothing to remember about its owner). */
  full(now = Date.now()): boolean {
    this.refill(now);
    return this.tokens >= this.capacity;
  }
}
