import { AdmissionQueue, OverloadedError, PlinthError } from '../src';

/** A task that runs until the test releases it, recording that it started. */
function gate(log: string[], name: string): { task: () => Promise<string>; release: () => void } {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return {
    task: async () => {
      log.push(name);
      await done;
      return name;
    },
    release: () => release(),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('AdmissionQueue', () => {
  it('runs at most `concurrency` tasks at once and starts the rest as slots free', async () => {
    const q = new AdmissionQueue({ name: 'test', concurrency: 2, maxQueued: 10 });
    const log: string[] = [];
    const gates = ['a', 'b', 'c'].map((n) => gate(log, n));
    const results = gates.map((g) => q.run({ project: 'p', caller: 'u' }, g.task));
    await tick();
    expect(log).toEqual(['a', 'b']);
    expect([q.running, q.queued]).toEqual([2, 1]);
    gates[0]!.release();
    await expect(results[0]).resolves.toBe('a');
    await tick();
    expect(log).toEqual(['a', 'b', 'c']);
    gates[1]!.release();
    gates[2]!.release();
    await expect(Promise.all(results)).resolves.toEqual(['a', 'b', 'c']);
    expect([q.running, q.queued]).toEqual([0, 0]);
  });

  it('refuses at once with 503 overloaded and Retry-After when the queue is full', async () => {
    const q = new AdmissionQueue({ name: 'queries', concurrency: 1, maxQueued: 1, retryAfterSeconds: 2 });
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = q.run({ project: 'p', caller: 'u' }, first.task);
    const waiting = q.run({ project: 'p', caller: 'v' }, () => 'second');
    expect(() => q.checkAdmission({ project: 'p', caller: 'w' })).toThrow(OverloadedError);
    const refused = q.run({ project: 'p', caller: 'w' }, () => 'third');
    await expect(refused).rejects.toBeInstanceOf(OverloadedError);
    const error = (await refused.catch((e: unknown) => e)) as PlinthError;
    expect(error.status).toBe(503);
    expect(error.toEnvelope()).toMatchObject({ error: 'overloaded', details: { retry_after: 2 } });
    expect(error.headers).toEqual({ 'Retry-After': '2' });
    first.release();
    await expect(running).resolves.toBe('first');
    await expect(waiting).resolves.toBe('second');
  });

  it("bounds one caller's share of the queue without refusing another caller", async () => {
    const q = new AdmissionQueue({ name: 'test', concurrency: 1, maxQueued: 10, maxQueuedPerCaller: 2 });
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = q.run({ project: 'p', caller: 'heavy' }, first.task);
    const heavy = [1, 2, 3].map((i) => q.run({ project: 'p', caller: 'heavy' }, () => `heavy${i}`));
    await expect(heavy[2]).rejects.toBeInstanceOf(OverloadedError);
    const other = q.run({ project: 'p', caller: 'light' }, () => 'light');
    first.release();
    await expect(Promise.all([running, heavy[0], heavy[1], other])).resolves.toEqual(['first', 'heavy1', 'heavy2', 'light']);
  });

  it("keeps room in the queue for another project while one project's share of it is full", async () => {
    const q = new AdmissionQueue({ name: 'test', concurrency: 1, maxQueued: 4, maxQueuedPerProject: 2 });
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = q.run({ project: 'flood', caller: 'a' }, first.task);
    const flood = [1, 2, 3].map((i) => q.run({ project: 'flood', caller: `c${i}` }, () => `flood${i}`));
    await expect(flood[2]).rejects.toBeInstanceOf(OverloadedError);
    const other = q.run({ project: 'other', caller: 'd' }, async () => (log.push('other'), 'other'));
    first.release();
    await expect(Promise.all([running, flood[0], flood[1], other])).resolves.toEqual(['first', 'flood1', 'flood2', 'other']);
    // The other project's task ran second: projects take turns.
    expect(log).toEqual(['first', 'other']);
  });

  describe('maxPredictedWaitMs', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('refuses at once a task predicted to wait longer, counting fair turns', async () => {
      const q = new AdmissionQueue({ name: 'hashing', concurrency: 1, maxQueued: 20, maxWaitMs: 1000, maxPredictedWaitMs: 250 });
      // One finished task teaches the queue that a task runs for 100 ms.
      await q.run({ project: 'p', caller: 'u' }, () => jest.advanceTimersByTime(100));
      const log: string[] = [];
      const first = gate(log, 'first');
      const running = q.run({ project: 'p', caller: 'u' }, first.task);
      const queued = [1, 2].map((i) => q.run({ project: 'p', caller: 'u' }, () => `u${i}`));
      // A third would start after 300 ms: refused now, not after 1000 ms of waiting.
      await expect(q.run({ project: 'p', caller: 'u' }, () => 'u3')).rejects.toBeInstanceOf(OverloadedError);
      // Another project's task starts after one of them: 200 ms.
      const other = q.run({ project: 'other', caller: 'v' }, () => 'other');
      expect(q.queued).toBe(3);
      first.release();
      await expect(Promise.all([running, ...queued, other])).resolves.toEqual(['first', 'u1', 'u2', 'other']);
    });

    it('lets as many tasks wait as there are slots even when one run is predicted to take longer', async () => {
      const q = new AdmissionQueue({ name: 'hashing', concurrency: 2, maxQueued: 20, maxWaitMs: 10_000, maxPredictedWaitMs: 250 });
      await q.run({ project: 'p', caller: 'u' }, () => jest.advanceTimersByTime(1000));
      const log: string[] = [];
      const running = [gate(log, 'a'), gate(log, 'b')];
      const runs = running.map((g) => q.run({ project: 'p', caller: 'u' }, g.task));
      const next = [1, 2].map((i) => q.run({ project: 'p', caller: 'u' }, () => `next${i}`));
      await expect(q.run({ project: 'p', caller: 'u' }, () => 'third')).rejects.toBeInstanceOf(OverloadedError);
      running.forEach((g) => g.release());
      await expect(Promise.all([...runs, ...next])).resolves.toEqual(['a', 'b', 'next1', 'next2']);
    });
  });

  it('gives a freed slot to the next caller in turn, not to the oldest burst', async () => {
    const q = new AdmissionQueue({ name: 'test', concurrency: 1, maxQueued: 20 });
    const order: string[] = [];
    const first = gate(order, 'a0');
    const all = [q.run({ project: 'p', caller: 'a' }, first.task)];
    for (let i = 1; i <= 4; i += 1) all.push(q.run({ project: 'p', caller: 'a' }, async () => (order.push(`a${i}`), `a${i}`)));
    all.push(q.run({ project: 'p', caller: 'b' }, async () => (order.push('b1'), 'b1')));
    all.push(q.run({ project: 'other', caller: 'c' }, async () => (order.push('c1'), 'c1')));
    first.release();
    await Promise.all(all);
    // Projects take turns (p, other, p, …); inside p the callers take turns (a, b, a, …).
    expect(order).toEqual(['a0', 'a1', 'c1', 'b1', 'a2', 'a3', 'a4']);
  });

  it("keeps slots free for others when one caller's long tasks arrive first", async () => {
    const q = new AdmissionQueue({ name: 'test', concurrency: 3, maxQueued: 20, maxRunningPerCaller: 2 });
    const log: string[] = [];
    const heavy = [1, 2, 3].map((i) => gate(log, `heavy${i}`));
    const runs = heavy.map((g) => q.run({ project: 'p', caller: 'heavy' }, g.task));
    await tick();
    expect(log).toEqual(['heavy1', 'heavy2']);
    await expect(q.run({ project: 'p', caller: 'light' }, () => 'light')).resolves.toBe('light');
    heavy.forEach((g) => g.release());
    await expect(Promise.all(runs)).resolves.toEqual(['heavy1', 'heavy2', 'heavy3']);
  });

  it('refuses a task that would wait past maxWaitMs, and never runs it', async () => {
    const q = new AdmissionQueue({ name: 'test', concurrency: 1, maxQueued: 5, maxWaitMs: 30 });
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = q.run({ project: 'p', caller: 'u' }, first.task);
    const late = q.run({ project: 'p', caller: 'v' }, async () => (log.push('late'), 'late'));
    await expect(late).rejects.toBeInstanceOf(OverloadedError);
    expect(q.queued).toBe(0);
    first.release();
    await running;
    await tick();
    expect(log).toEqual(['first']);
  });

  it("refuses a task past its own shorter wait (what is left of its budget), while others keep the queue's", async () => {
    const q = new AdmissionQueue({ name: 'test', concurrency: 1, maxQueued: 5, maxWaitMs: 10_000 });
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = q.run({ project: 'p', caller: 'u' }, first.task);
    const short = q.run({ project: 'p', caller: 'v', maxWaitMs: 20 }, () => 'short');
    const patient = q.run({ project: 'p', caller: 'w' }, () => 'patient');
    let refused: unknown;
    short.catch((e: unknown) => (refused = e));
    await new Promise((r) => setTimeout(r, 200));
    expect(refused).toBeInstanceOf(OverloadedError);
    expect(q.queued).toBe(1);
    first.release();
    await running;
    await expect(patient).resolves.toBe('patient');
  });

  it('tells a task how long it waited', async () => {
    const q = new AdmissionQueue({ name: 'test', concurrency: 1, maxQueued: 5 });
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = q.run({ project: 'p', caller: 'u' }, first.task);
    const waited = q.run({ project: 'p', caller: 'u' }, ({ waitedMs }) => waitedMs);
    await new Promise((r) => setTimeout(r, 40));
    first.release();
    await running;
    expect(await waited).toBeGreaterThanOrEqual(30);
    await expect(q.run({ project: 'p', caller: 'u' }, ({ waitedMs }) => waitedMs)).resolves.toBe(0);
  });

  it('drops a waiting task whose client went away before it starts', async () => {
    const q = new AdmissionQueue({ name: 'test', concurrency: 1, maxQueued: 5 });
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = q.run({ project: 'p', caller: 'u' }, first.task);
    const gone = new AbortController();
    const dropped = q.run({ project: 'p', caller: 'v', signal: gone.signal }, async () => (log.push('dropped'), 'x'));
    gone.abort();
    await expect(dropped).rejects.toMatchObject({ status: 503 });
    expect(q.queued).toBe(0);
    await expect(q.run({ project: 'p', caller: 'w', signal: gone.signal }, () => 'y')).rejects.toMatchObject({ status: 503 });
    first.release();
    await running;
    await tick();
    expect(log).toEqual(['first']);
  });

  it('refuses everything still waiting on close, and lets running tasks finish', async () => {
    const q = new AdmissionQueue({ name: 'hashing', concurrency: 1, maxQueued: 5 });
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = q.run({ project: 'p', caller: 'u' }, first.task);
    const waiting = [1, 2].map((i) => q.run({ project: 'p', caller: `c${i}` }, () => `w${i}`));
    q.close();
    await expect(Promise.all(waiting.map((w) => w.catch((e: PlinthError) => e.status)))).resolves.toEqual([503, 503]);
    await expect(q.run({ project: 'p', caller: 'u' }, () => 'after')).rejects.toMatchObject({ status: 503 });
    first.release();
    await expect(running).resolves.toBe('first');
  });

  it('frees the slot of a task that throws', async () => {
    const q = new AdmissionQueue({ name: 'test', concurrency: 1, maxQueued: 5 });
    await expect(q.run({ project: 'p', caller: 'u' }, () => { throw new Error('boom'); })).rejects.toThrow('boom');
    await expect(q.run({ project: 'p', caller: 'u' }, () => 'next')).resolves.toBe('next');
    expect([q.running, q.queued]).toEqual([0, 0]);
  });
});
