/**
 * The self-service flows, written once against a MailReader so the same steps run
 * through the dev mailbox (standalone) and over real SMTP (cluster): change password, change
 * e-mail (link to the new address, notice to the old), profile, delete own account with a code.
 */
import { projectCall, type ProjectAccess, type SessionBody, type UserBody } from './api';
import { codeFrom, PASSWORD, tokenFromLink, type MailReader } from './mail-flows';

const NEW_PASSWORD = 'self-service new password';

export async function selfServiceFlows(p: ProjectAccess, read: MailReader, email: string): Promise<void> {
  const signUp = await projectCall<SessionBody>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email, password: PASSWORD } });
  expect(signUp.status).toBe(201);
  let session = signUp.body;
  const me = (token = session.access_token) => projectCall<{ user: UserBody & { display_name: string | null } }>(p, 'GET', '/auth/user', { key: p.publicKey, userToken: token });
  const signIn = (address: string, password: string) =>
    projectCall<SessionBody>(p, 'POST', '/auth/signin', { key: p.publicKey, body: { email: address, password } });

  // Profile.
  const profile = await projectCall<{ user: { display_name: string } }>(p, 'PATCH', '/auth/user', {
    key: p.publicKey, userToken: session.access_token, body: { display_name: 'Self Service' },
  });
  expect(profile).toMatchObject({ status: 200, body: { user: { display_name: 'Self Service' } } });

  // Change password: a new session answers, the old one ends.
  const changed = await projectCall<SessionBody>(p, 'POST', '/auth/password/change', {
    key: p.publicKey, userToken: session.access_token, body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
  });
  expect(changed.status).toBe(200);
  expect((await me()).status).toBe(401);
  session = changed.body;
  expect((await me()).status).toBe(200);
  expect((await signIn(email, PASSWORD)).status).toBe(401);
  expect((await signIn(email, NEW_PASSWORD)).status).toBe(200);

  // Change e-mail: link to the new address, notice to the old; nothing changes before the confirm.
  const newEmail = `new-${email}`;
  const asked = await projectCall(p, 'POST', '/auth/email/change', {
    key: p.publicKey, userToken: session.access_token, body: { new_email: newEmail, password: NEW_PASSWORD },
  });
  expect(asked).toEqual({ status: 200, body: { sent: true } });
  const notice = await read(email, 'email-changed');
  expect(notice).toContain(newEmail);
  const link = await read(newEmail, 'email-change');
  expect((await me()).body.user.email).toBe(email);
  // Confirmed from the session that asked: the account keeps its password and sessions.
  const confirmed = await projectCall<{ changed: boolean; user: UserBody }>(p, 'POST', '/auth/email/confirm', {
    key: p.publicKey, userToken: session.access_token, body: { token: tokenFromLink(link) },
  });
  expect(confirmed).toMatchObject({ status: 200, body: { changed: true, user: { email: newEmail, email_verified: true } } });
  expect((await signIn(newEmail, NEW_PASSWORD)).status).toBe(200);
  expect((await me()).status).toBe(200);

  // Delete the account with a fresh sign-in code.
  expect((await projectCall(p, 'POST', '/auth/otp/request', { key: p.publicKey, body: { email: newEmail } })).status).toBe(200);
  const code = codeFrom(await read(newEmail, 'otp'));
  const deleted = await projectCall(p, 'DELETE', '/auth/user', { key: p.publicKey, userToken: session.access_token, body: { code } });
  expect(deleted).toEqual({ status: 200, body: { deleted: true } });
  expect((await me()).status).toBe(401);
  expect((await signIn(newEmail, NEW_PASSWORD)).status).toBe(401);
}
