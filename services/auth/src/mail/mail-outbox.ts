import type { MailQueue } from '@plinth/shared';

export type { MailJob, MailKind } from '@plinth/shared';

/**
 * Where the auth service puts mail jobs (`verify`, `reset`, `otp`): the producer side of the
 * shared MailQueue (shared/src/mail-queue), which the mailer consumes. The auth service never
 * sends mail itself. `enqueue` resolves once the job is durably stored.
 */
export type MailOutbox = Pick<MailQueue, 'enqueue'>;
