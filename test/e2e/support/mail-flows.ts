/**
 * The three mail flows (verification, reset, sign-in code), written once against a "mail reader" so the same steps run
 * over real SMTP (cluster) and over the dev mailbox (standalone).
 */
import { waitFor } from '@plinth/shared/testing/wait-for';
import type { CapturedMail, SmtpCapture } from '../../../services/mailer/test/support/smtp-capture';
import { projectCall, type ProjectAccess, type SessionBody, type UserBody } from './api';

export type MailKindName = 'verify' | 'reset' | 'otp' | 'email-change' | 'email-changed';

/** Waits for a mail of `kind` to `to` not returned before, and returns its plain-text body. */
export type MailReader = (to: string, kind: MailKindName) => Promise<string>;

export const PASSWORD = 'correct horse battery';

/** The one-time token of a verify or reset link (`…?token=<token>&type=…`). */
export function tokenFromLink(text: string): string {
  const m = /[?&]token=([^&\s"<>]+)/.exec(text);
  if (!m) throw new Error(`no ?token= link in:\n${text}`);
  return decodeURIComponent(m[1]!);
}

/** The 6-digit code of an OTP mail. */
export function codeFrom(text: string): string {
  const m = /\b(\d{6})\b/.exec(text);
  if (!m) throw new Error(`no 6-digit code in:\n${text}`);
  return m[1]!;
}

/** The value of the X-Plinth-Mail-Kind header of a captured message. */
export function mailKind(m: CapturedMail): string {
  return String(m.headers.get('x-plinth-mail-kind') ?? '');
}

/** Messages the capture server accepted for `to` (any kind, or only `kind`). */
export function capturedFor(smtp: SmtpCapture, to: string, kind?: MailKindName): CapturedMail[] {
  return smtp.messages.filter((m) => m.to.includes(to) && (kind === undefined || mailKind(m) === kind));
}

/** Reads mails the SMTP capture server received. */
export function smtpReader(smtp: SmtpCapture): MailReader {
  const seen = new Set<CapturedMail>();
  return async (to, kind) => {
    const mail = await waitFor(`a ${kind} mail to ${to} over SMTP`, () =>
      capturedFor(smtp, to, kind).find((m) => !seen.has(m)),
    );
    seen.add(mail);
    return mail.text;
  };
}

interface MailboxMessage {
  id: string;
  to: string;
  kind: string;
  text: string;
}

/** Reads the dev mailbox through the gateway (`GET /mailbox?to=`, secret key). */
export function mailboxReader(p: ProjectAccess): MailReader {
  const seen = new Set<string>();
  return async (to, kind) => {
    const mail = await waitFor(`a ${kind} mail to ${to} in the mailbox`, async () => {
      const res = await projectCall<{ messages: MailboxMessage[] }>(p, 'GET', `/mailbox?to=${encodeURIComponent(to)}`, {
        key: p.secretKey,
      });
      expect(res.status).toBe(200);
      return res.body.messages.find((m) => m.kind === kind && !seen.has(m.id));
    });
    seen.add(mail.id);
    return mail.text;
  };
}

/**
 * Sign-up → the verification mail arrives → its link token, confirmed with the account's
 * password (the confirmer holds the account, so it keeps its password), verifies the e-mail.
 */
export async function signUpAndVerify(p: ProjectAccess, read: MailReader, email: string): Promise<void> {
  const signup = await projectCall<SessionBody>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email, password: PASSWORD } });
  expect(signup.status).toBe(201);
  expect(signup.body.user.email_verified).toBe(false);

  const token = tokenFromLink(await read(email, 'verify'));
  const confirm = await projectCall<{ verified: boolean; user: UserBody }>(p, 'POST', '/auth/verify/confirm', {
    key: p.publicKey,
    body: { token, password: PASSWORD },
  });
  expect(confirm.status).toBe(200);
  expect(confirm.body).toMatchObject({ verified: true, user: { id: signup.body.user.id, email, email_verified: true } });

  const signin = await projectCall<SessionBody>(p, 'POST', '/auth/signin', { key: p.publicKey, body: { email, password: PASSWORD } });
  expect(signin.status).toBe(200);
  expect(signin.body.user.email_verified).toBe(true);

  const again = await projectCall(p, 'POST', '/auth/verify/confirm', { key: p.publicKey, body: { token } });
  expect(again.status).toBe(400);
  expect(again.body).toMatchObject({ error: 'invalid_request', details: { field: 'token' } });
}

/** Forgot → the reset mail arrives → the new password signs in and the old one does not. */
export async function forgotAndReset(p: ProjectAccess, read: MailReader, email: string, oldPassword = PASSWORD): Promise<void> {
  const forgot = await projectCall(p, 'POST', '/auth/password/forgot', { key: p.publicKey, body: { email } });
  expect(forgot).toEqual({ status: 200, body: { sent: true } });

  const token = tokenFromLink(await read(email, 'reset'));
  const newPassword = 'a brand new passphrase';
  const reset = await projectCall(p, 'POST', '/auth/password/reset', { key: p.publicKey, body: { token, password: newPassword } });
  expect(reset).toEqual({ status: 200, body: { reset: true } });

  const withNew = await projectCall<SessionBody>(p, 'POST', '/auth/signin', { key: p.publicKey, body: { email, password: newPassword } });
  expect(withNew.status).toBe(200);
  expect(withNew.body.user.email).toBe(email);
  const withOld = await projectCall(p, 'POST', '/auth/signin', { key: p.publicKey, body: { email, password: oldPassword } });
  expect(withOld.status).toBe(401);
}

/** OTP request → the code arrives → redeeming it answers a session that /auth/user accepts. */
export async function otpSignIn(p: ProjectAccess, read: MailReader, email: string): Promise<void> {
  const request = await projectCall(p, 'POST', '/auth/otp/request', { key: p.publicKey, body: { email } });
  expect(request).toEqual({ status: 200, body: { sent: true } });

  const code = codeFrom(await read(email, 'otp'));
  const redeem = await projectCall<SessionBody>(p, 'POST', '/auth/otp/redeem', { key: p.publicKey, body: { email, code } });
  expect(redeem.status).toBe(200);
  expect(redeem.body.user).toMatchObject({ email, email_verified: true });

  const me = await projectCall<{ user: UserBody }>(p, 'GET', '/auth/user', { key: p.publicKey, userToken: redeem.body.access_token });
  expect(me.status).toBe(200);
  expect(me.body.user.id).toBe(redeem.body.user.id);

  const spent = await projectCall(p, 'POST', '/auth/otp/redeem', { key: p.publicKey, body: { email, code } });
  expect(spent.status).toBe(401);
}
