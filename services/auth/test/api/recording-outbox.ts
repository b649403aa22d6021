import { assertMailJob, type ProjectId } from '@plinth/shared';
import type { MailJob, MailOutbox } from '../../src/mail/mail-outbox';

/**
 * A MailOutbox that keeps what the service enqueued, so tests read tokens and codes from the
 * mail jobs exactly as the mailer would receive them (each job is checked as the queue does).
 */
export class RecordingOutbox implements MailOutbox {
  private readonly jobs: MailJob[] = [];

  async enqueue(job: MailJob): Promise<void> {
    assertMailJob(job);
    this.jobs.push(structuredClone(job));
  }

  /** The project's jobs, newest first, optionally only those to one address. */
  list(project: ProjectId, to?: string): MailJob[] {
    return this.jobs.filter((j) => j.project === project && (to === undefined || j.to === to)).reverse();
  }
}
