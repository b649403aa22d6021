import type { ProjectId } from '@plinth/shared';

export type MailJobKind = 'verify' | 'reset' | 'otp';

/**
 * A mail the mailer should send. The auth service never sends mail itself; it enqueues these.
 * `data` carries the raw link token (verify, reset) or code (otp): the only place they exist.
 */
export interface MailJob {
  id: string;
  project: ProjectId;
  kind: MailJobKind;
  to: string;
  data: { token: string } | { code: string };
  /** ISO 8601. */
  created_at: string;
}

/** Where the auth service puts mail jobs. Resolves once the job is durably stored. */
export interface MailOutbox {
  enqueue(job: MailJob): Promise<void>;
}
