import { newId, type Announcements, type ProjectId } from '@plinth/shared';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { ProviderClients } from '../oauth/provider-clients';
import type { HashTicket, PasswordHasher } from '../domain/passwords';
import type { FactorSecrets } from '../domain/totp';
import type { MailJob, MailKind, MailOutbox } from '../mail/mail-outbox';
import type { SessionStore } from '../store/session-store';
import type { UserStore } from '../store/user-store';
import type { AccessTokens } from '../tokens/access-tokens';
import type { SigningKeys } from '../tokens/signing-keys';
import type { AnonymousCleanup } from './anonymous-cleanup';
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
  /** The bus every process listens to (purges, key changes). */
  announcements: Announcements;
  /** Work started after a route answered (see background.ts). */
  background: BackgroundWork;
  /** Removal of idle anonymous users (anonymous-cleanup.ts). */
  anonymous: AnonymousCleanup;
  /** Encryption of TOTP secrets at rest. */
  factorSecrets: FactorSecrets;
  /** Sign-in with providers (flows/oauth-sign-in.ts). */
  oauth: OAuthContext;
}

export interface OAuthContext {
  /** The address users reach the gateway at (PLINTH_PUBLIC_URL), without a trailing slash: the callback is under it. */
  publicUrl: string;
  clients: ProviderClients;
  log: Logger;
}

/**
 * Who asked, for the fair shares of the hashing pool: a caller key (`ip:<address>` for an
 * anonymous client, `user:<id>` for a signed-in one, `secret-key` for the project's own server)
 * and the signal that fires when the client goes away (its hash is then dropped unstarted).
 */
export interface Requester {
  caller: string;
  signal?: AbortSignal;
}

/** The hashing pool's ticket of a request to `project`. */
export function hashTicket(project: ProjectId, by: Requester): HashTicket {
  return { project, caller: by.caller, signal: by.signal };
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
