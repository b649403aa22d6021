import { CleanupSchedule } from '@plinth/shared';

/** A cleanup whose end the test decides: records each start, runs its first step at once. */
function controlled() {
  const starts: number[] = [];
  let finish: (err?: Error) => void = () => {};
  const schedule = new CleanupSchedule(60_000, async (now) => {
    starts.push(now);
    await new Promise<void>((resolve, reject) => {
      finish = (err) => (err ? reject(err) : resolve());
    });
  });
  const settled = () => new Promise((r) => setImmediate(r));
  return { schedule, starts, finish: (err?: Error) => finish(err), settled };
}

describe('CleanupSchedule', () => {
  it('starts a cleanup within the call that finds it due, and never two at once', async () => {
    const c = controlled();
    c.schedule.maybeRun(100_000);
    expect(c.starts).toEqual([100_000]);
    // Still running a minute on: no second cleanup.
    c.schedule.maybeRun(200_000);
    expect(c.starts).toEqual([100_000]);
    c.finish();
    await c.settled();
    c.schedule.maybeRun(200_001);
    expect(c.starts).toEqual([100_000, 200_001]);
  });

  it('waits everyMs after the last start, and a failed cleanup lets the next one run', async () => {
    const c = controlled();
    c.schedule.maybeRun(100_000);
    c.finish(new Error('disk full'));
    await c.settled();
    c.schedule.maybeRun(159_999);
    expect(c.starts).toEqual([100_000]);
    c.schedule.maybeRun(160_000);
    expect(c.starts).toEqual([100_000, 160_000]);
  });
});
