import { DependencyBreaker } from '@plinth/shared';

/** A dependency that just failed is skipped for a while, then tried by one call at a time. */
describe('DependencyBreaker', () => {
  let now: number;
  let down: boolean;
  let breaker: DependencyBreaker;

  beforeEach(() => {
    now = 0;
    down = false;
    breaker = new DependencyBreaker({ retryMs: 2000, now: () => now, isDown: () => down });
  });

  it('lets every call through while the dependency works', () => {
    expect([breaker.allow(), breaker.allow(), breaker.allow()]).toEqual([true, true, true]);
    expect(breaker.skipping).toBe(false);
  });

  it('after a failure, skips it for retryMs; then lets one probe through, and all calls once the probe succeeds', () => {
    breaker.failed();
    expect(breaker.allow()).toBe(false);
    now = 1999;
    expect(breaker.allow()).toBe(false);
    now = 2000;
    expect([breaker.allow(), breaker.allow()]).toEqual([true, false]);
    breaker.succeeded();
    expect([breaker.allow(), breaker.allow()]).toEqual([true, true]);
  });

  it('a failed probe starts the pause again', () => {
    breaker.failed();
    now = 2000;
    expect(breaker.allow()).toBe(true);
    breaker.failed();
    now = 3999;
    expect(breaker.allow()).toBe(false);
    now = 4000;
    expect(breaker.allow()).toBe(true);
  });

  it('skips a dependency known to be down without trying it', () => {
    down = true;
    expect(breaker.allow()).toBe(false);
    expect(breaker.skipping).toBe(true);
    down = false;
    expect(breaker.allow()).toBe(true);
  });
});
