import { NotFoundError, asProjectId, type MailAttempt, type MailJob, type MailQueue } from '@plinth/shared';
import { testMailJob } from '@plinth/shared/testing/mail-job';
import { waitFor } from '@plinth/shared/testing/wait-for';

/** Options every adapter honours in the contract. */
export interface ContractQueueOptions {
  attempts: number;
  backoffMs: number;
  concurrency?: number;
}

/** One test's storage: every `open` is another process attached to the same queue. */
export interface MailQueueFixture {
  open(opts: ContractQueueOptions): MailQueue;
  /** Deletes the storage after the queues are closed. */
  cleanup(): Promise<void>;
}

const project = asProjectId('acme-mail');
const otherProject = asProjectId('other-mail');

export function mailJob(overrides: Partial<MailJob> = {}): MailJob {
  return testMailJob({ project, ...overrides });
}

interface Call {
  job: MailJob;
  attempt: MailAttempt;
  at: number;
}

/**
 * The MailQueue contract (docs/architecture.md "Ports and adapters"): every adapter must pass it unchanged.
 * `makeFixture` gives each test fresh storage (a unique queue name, a new SQLite file).
 */
export function describeMailQueueContract(name: string, makeFixture: () => Promise<MailQueueFixture>): void {
  describe(`MailQueue contract: ${name}`, () => {
    let fixture: MailQueueFixture;
    let opened: MailQueue[];

    const open = (opts: ContractQueueOptions): MailQueue => {
      const queue = fixture.open(opts);
      opened.push(queue);
      return queue;
    };

    /** Starts a consumer that records every call and fails while `fail(call)` says so. */
    const consume = (queue: MailQueue, fail: (call: Call, calls: Call[]) => boolean = () => false): Call[] => {
      const calls: Call[] = [];
      queue.start(async (job, attempt) => {
        const call = { job, attempt, at: Date.now() };
        calls.push(call);
        if (fail(call, calls)) throw new Error(`refused attempt ${attempt.attempt}`);
      });
      return calls;
    };

    const settled = (queue: MailQueue) =>
      waitFor('the queue to settle', async () => {
        const c = await queue.counts();
        return c.waiting === 0 && c.active === 0;
      });

    beforeEach(async () => {
      fixture = await makeFixture();
      opened = [];
    });

    afterEach(async () => {
      for (const queue of opened) await queue.close();
      await fixture.cleanup();
    });

    it('delivers an enqueued job to the handler unchanged, as attempt 1 of N', async () => {
      const queue = open({ attempts: 3, backoffMs: 10 });
      const job = mailJob({ kind: 'otp', data: { code: '123456' } });
      await queue.enqueue(job);
      const calls = consume(queue);
      await waitFor('delivery', () => calls.length === 1);
      await settled(queue);
      expect(calls.map((c) => [c.job, c.attempt])).toEqual([[job, { attempt: 1, attempts: 3 }]]);
    });

    it('counts waiting jobs before a consumer starts', async () => {
      const queue = open({ attempts: 3, backoffMs: 10 });
      await queue.enqueue(mailJob());
      await queue.enqueue(mailJob());
      expect(await queue.counts()).toEqual({ waiting: 2, active: 0, failed: 0 });
    });

    it('is idempotent by job id: the same id enqueued twice, or again after delivery, is delivered once', async () => {
      const queue = open({ attempts: 3, backoffMs: 10 });
      const job = mailJob();
      await queue.enqueue(job);
      await queue.enqueue({ ...job, to: 'someone-else@example.com' });
      const calls = consume(queue);
      await waitFor('delivery', () => calls.length >= 1);
      await settled(queue);
      await queue.enqueue(job);
      const marker = mailJob();
      await queue.enqueue(marker);
      await waitFor('the marker job', () => calls.some((c) => c.job.id === marker.id));
      await settled(queue);
      expect(calls.map((c) => c.job)).toEqual([job, marker]);
    });

    it('retries a failing job with exponential backoff until it succeeds', async () => {
      const queue = open({ attempts: 5, backoffMs: 40 });
      const job = mailJob();
      await queue.enqueue(job);
      const calls = consume(queue, (call) => call.attempt.attempt <= 2);
      await waitFor('the third attempt', () => calls.length === 3);
      await settled(queue);
      expect(calls.map((c) => c.attempt)).toEqual([
        { attempt: 1, attempts: 5 },
        { attempt: 2, attempts: 5 },
        { attempt: 3, attempts: 5 },
      ]);
      // Lower bounds only: attempt n+1 never starts before backoff * 2^(n-1) has passed.
      expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(40 - 5);
      expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(80 - 5);
      expect(await queue.listFailed(project)).toEqual([]);
      expect((await queue.counts()).failed).toBe(0);
    });

    it('dead-letters a job after its last attempt, visible to its project only', async () => {
      const queue = open({ attempts: 3, backoffMs: 5 });
      const job = mailJob();
      await queue.enqueue(job);
      const calls = consume(queue, () => true);
      const failed = await waitFor('the dead letter', async () => {
        const list = await queue.listFailed(project);
        return list.length === 1 ? list : undefined;
      });
      expect(calls.map((c) => c.attempt.attempt)).toEqual([1, 2, 3]);
      expect(failed).toEqual([{ job, attempts: 3, error: 'refused attempt 3', failed_at: expect.any(String) }]);
      expect(Date.parse(failed[0]!.failed_at)).toBeGreaterThanOrEqual(calls[2]!.at - 1000);
      expect(await queue.listFailed(otherProject)).toEqual([]);
      expect(await queue.counts()).toEqual({ waiting: 0, active: 0, failed: 1 });
      // Enqueueing the dead job's id again does not revive it: only retryFailed does.
      await queue.enqueue(job);
      expect(await queue.counts()).toEqual({ waiting: 0, active: 0, failed: 1 });
      expect(calls).toHaveLength(3);
    });

    it('lists dead letters newest failure first', async () => {
      const queue = open({ attempts: 1, backoffMs: 5 });
      const calls = consume(queue, () => true);
      const first = mailJob();
      const second = mailJob();
      await queue.enqueue(first);
      await waitFor('the first dead letter', async () => (await queue.listFailed(project)).length === 1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await queue.enqueue(second);
      await waitFor('the second dead letter', async () => (await queue.listFailed(project)).length === 2);
      expect((await queue.listFailed(project)).map((f) => f.job.id)).toEqual([second.id, first.id]);
      expect(calls).toHaveLength(2);
    });

    it('retryFailed moves a dead letter back with fresh attempts, and it is delivered', async () => {
      const queue = open({ attempts: 2, backoffMs: 5 });
      let accept = false;
      const job = mailJob();
      await queue.enqueue(job);
      const calls = consume(queue, () => !accept);
      await waitFor('the dead letter', async () => (await queue.listFailed(project)).length === 1);
      accept = true;
      await queue.retryFailed(project, job.id);
      await waitFor('the retried delivery', () => calls.length === 3);
      await settled(queue);
      expect(calls.map((c) => c.attempt.attempt)).toEqual([1, 2, 1]);
      expect(await queue.listFailed(project)).toEqual([]);
      expect(await queue.counts()).toEqual({ waiting: 0, active: 0, failed: 0 });
    });

    it("retryFailed refuses an unknown id, a delivered job and another project's dead letter", async () => {
      const queue = open({ attempts: 1, backoffMs: 5 });
      const delivered = mailJob();
      const dead = mailJob();
      const calls = consume(queue, (call) => call.job.id === dead.id);
      await queue.enqueue(delivered);
      await queue.enqueue(dead);
      await waitFor('the dead letter', async () => (await queue.listFailed(project)).length === 1);
      await settled(queue);
      await expect(queue.retryFailed(project, 'mail_unknown')).rejects.toThrow(NotFoundError);
      await expect(queue.retryFailed(project, delivered.id)).rejects.toThrow(NotFoundError);
      await expect(queue.retryFailed(otherProject, dead.id)).rejects.toThrow(NotFoundError);
      expect((await queue.listFailed(project)).map((f) => f.job.id)).toEqual([dead.id]);
      expect(calls).toHaveLength(2);
    });

    it("purgeProject removes the project's waiting and dead jobs, and only its own", async () => {
      const queue = open({ attempts: 1, backoffMs: 5 });
      const dead = mailJob();
      const otherDead = mailJob({ project: otherProject });
      consume(queue, () => true);
      await queue.enqueue(dead);
      await queue.enqueue(otherDead);
      await waitFor('both dead letters', async () => (await queue.counts()).failed === 2);
      await queue.stop();
      const waiting = mailJob();
      const otherWaiting = mailJob({ project: otherProject });
      await queue.enqueue(waiting);
      await queue.enqueue(otherWaiting);
      expect(await queue.counts()).toEqual({ waiting: 2, active: 0, failed: 2 });
      await queue.purgeProject(project);
      await queue.purgeProject(project);
      expect(await queue.listFailed(project)).toEqual([]);
      expect((await queue.listFailed(otherProject)).map((f) => f.job.id)).toEqual([otherDead.id]);
      expect(await queue.counts()).toEqual({ waiting: 1, active: 0, failed: 1 });
      const calls = consume(queue);
      await waitFor('the other project\'s mail', () => calls.length === 1);
      await settled(queue);
      expect(calls.map((c) => c.job.id)).toEqual([otherWaiting.id]);
    });

    it('refuses a malformed job, naming the field, and queues nothing', async () => {
      const queue = open({ attempts: 1, backoffMs: 5 });
      await expect(queue.enqueue(mailJob({ id: 'has:colon' }))).rejects.toThrow(/"id"/);
      await expect(queue.enqueue(mailJob({ kind: 'welcome' as MailJob['kind'] }))).rejects.toThrow(/"kind"/);
      await expect(queue.enqueue(mailJob({ to: 'not an address' }))).rejects.toThrow(/"to"/);
      await expect(queue.enqueue(mailJob({ kind: 'otp', data: { token: 't' } }))).rejects.toThrow(/"data.code"/);
      expect(await queue.counts()).toEqual({ waiting: 0, active: 0, failed: 0 });
    });

    it('stop waits for the in-flight delivery and takes nothing new; another consumer delivers the rest once', async () => {
      const first = open({ attempts: 3, backoffMs: 5, concurrency: 1 });
      const jobs = [mailJob(), mailJob(), mailJob()];
      for (const job of jobs) await first.enqueue(job);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const delivered: string[] = [];
      first.start(async (job) => {
        await gate;
        delivered.push(job.id);
      });
      await waitFor('a job in flight', async () => (await first.counts()).active === 1);
      let stopped = false;
      const stopping = first.stop().then(() => (stopped = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(stopped).toBe(false);
      release();
      await stopping;
      expect(delivered).toEqual([jobs[0]!.id]);
      expect(await first.counts()).toEqual({ waiting: 2, active: 0, failed: 0 });

      const second = open({ attempts: 3, backoffMs: 5 });
      const calls = consume(second);
      await waitFor('the remaining jobs', () => calls.length === 2);
      await settled(second);
      expect([...delivered, ...calls.map((c) => c.job.id)].sort()).toEqual(jobs.map((j) => j.id).sort());
    });
  });
}
