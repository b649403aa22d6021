import { newId } from '../ids';
import type { MailJob } from '../mail-queue/mail-job';

/**
 * A well-formed mail job for tests: a fresh id, project `acme`, a token (or, for `otp`, a
 * code), created now. Tests override what they assert on.
 */
export function testMailJob(overrides: Partial<MailJob> = {}): MailJob {
  const kind = overrides.kind ?? 'verify';
  return {
    id: newId('mail_'),
    project: 'acme',
    kind,
    to: 'ada@example.com',
    data: kind === 'otp' ? { code: '123456' } : { token: newId('tok_') },
    created_at: new Date().toISOString(),
    ...overrides,
  };
}
