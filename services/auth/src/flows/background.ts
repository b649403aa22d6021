import type { Logger } from 'pino';

/**
 * Work a route starts after it has answered: `password/forgot` and `otp/request` answer
 * `{sent:true}` first and look the e-mail up, write and enqueue afterwards, so the answer takes
 * the same time for known and unknown addresses. A failure is logged (message only, never the
 * job's data); `idle()` resolves once everything started so far has finished (shutdown, tests).
 */
export class BackgroundWork {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly logger: Pick<Logger, 'error'>) {}

  /** Starts `work` now; never throws to the caller. */
  run(what: string, work: () => Promise<void>): void {
    const done: Promise<void> = work()
      .catch((err: unknown) => {
        this.logger.error({ work: what, error: err instanceof Error ? err.message : String(err) }, 'background auth work failed');
      })
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Resolves when every piece of work started before (and during) this call has finished. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
