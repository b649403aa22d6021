import { newId, type ProjectId } from '@plinth/shared';
import type { Clock } from '../clock';
import type { PasswordHasher } from '../domain/passwords';
import type { MailJob, MailKind, MailOutbox } from '../mail/mail-outbox';
import type { SessionStore } from '../store/session-store';
import type { UserStore } from '../store/user-store';
import type { AccessTokens } from '../tokens/access-tokens';
import type { SigningKeys } from '../tokens/signing-keys';
import type { BackgroundWork } from './background';
import type { SettingsReader } from './settings';

/** Everything the flows need, built once per service (service.ts) and shared by the routes. */
export interface AuthContext {
  users: UserStore;
  sessions: SessionStore;
  outbox: MailOutbox;
  passwords: PasswordHasher;
  keys: SigningKeys;
  tokens: AccessTokens;
  settings: SettingsReader;
  clock: Clock;
  /** Work started after a route answered (see background.ts). */
  background: BackgroundWork;
}

/** Enqueues a mail job for the mailer. */
export async function sendMail(
  ctx: AuthContext,
  project: ProjectId,
  kind: MailKind,
  to: string,
  data: MailJob['data'],
  /** The job id (the queue's idempotency key); default a fresh one. */
  jobId: string = newId('mail_'),
): Promise<void> {
  await ctx.outbox.enqueue({ id: jobId, project, kind, to, data, created_at: new Date(ctx.clock()).toISOString() });
}
