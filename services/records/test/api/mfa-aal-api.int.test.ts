/**
 * Two-factor sign-in and records, through the real gateway in both topologies: a sign-in that
 * still needs its second factor yields nothing any service accepts (the challenge is no
 * credential for records, realtime or Auth), and a rule can demand `auth.token.aal == 2`.
 */
import { Secret, TOTP } from 'otpauth';
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { RtClient } from '../../../realtime/test/support/rt-client';

const PASSWORD = 'second factor over http';
/** Readable by its owner; writable only with a second factor. */
const VAULT = {
  name: 'vault',
  fields: { owner: { type: 'text' }, body: { type: 'text' } },
  rules: { read: 'auth != null && record.owner == auth.uid', create: 'auth != null && auth.token.aal == 2 && data.owner == auth.uid' },
};

let t: TestPlinth;
const at = (path: string) => `/v1/projects/${t.project.id}${path}`;
const pub = (method: 'get' | 'post' | 'delete', path: string) => request(t.app)[method](at(path)).set('Authorization', `Bearer ${t.project.publicKey}`);
const secret = (method: 'post' | 'patch', path: string) => request(t.app)[method](at(path)).set('Authorization', `Bearer ${t.project.secretKey}`);
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { [k: string]: unknown };
/** The code of a 30-second time step (the services run on the wall clock). */
const codeFor = (totpSecret: string, step: number) => TOTP.generate({ secret: Secret.fromBase32(totpSecret), timestamp: step * 30_000 });
const stepNow = () => Math.floor(Date.now() / 30_000);

let uid: string;
let totpSecret: string;
let aal1Token: string;
let aal2Token: string;

beforeAll(async () => {
  t = await startTestPlinth({ realtimeReplicas: 1 });
  await secret('patch', '/settings/auth').send({ enabled: true, send_verification_on_signup: false }).expect(200);
  await secret('post', '/collections').send(VAULT).expect(201);
  const up = await pub('post', '/auth/signup').send({ email: 'vault-owner@example.com', password: PASSWORD });
  expect(up.status).toBe(201);
  uid = up.body.user.id;
  aal1Token = up.body.access_token;
  const enroll = await pub('post', '/auth/mfa/totp/enroll').set('X-Auth-User-Token', aal1Token).send({});
  expect(enroll.status).toBe(200);
  totpSecret = enroll.body.secret;
  // This step's code confirms; the sign-in below uses the next step's (one step of drift is accepted either way).
  const confirm = await pub('post', '/auth/mfa/totp/confirm').set('X-Auth-User-Token', aal1Token).send({ code: codeFor(totpSecret, stepNow()) });
  expect(confirm.status).toBe(200);
  // The confirming session is replaced by one at aal 2.
  aal2Token = confirm.body.session.access_token;
}, 120_000); // a cluster with a realtime replica starts slowly on a busy machine
afterAll(() => t?.close());

describe('two-factor sign-in and records', () => {
  it('sign-in without the second factor gives a challenge that no service accepts as a token', async () => {
    const first = await pub('post', '/auth/signin').send({ email: 'vault-owner@example.com', password: PASSWORD });
    expect(first.status).toBe(401);
    expect(first.body.error).toBe('mfa_required');
    expect(first.body).not.toHaveProperty('access_token');
    const challenge = first.body.details.challenge as string;
    // Records: as the user token, and as the project key.
    expect((await pub('get', '/collections/vault/records').set('X-Db-User-Token', challenge)).status).toBe(401);
    expect((await request(t.app).get(at('/collections/vault/records')).set('Authorization', `Bearer ${challenge}`)).status).toBe(401);
    // Auth endpoints.
    expect((await pub('get', '/auth/user').set('X-Auth-User-Token', challenge)).status).toBe(401);
    expect((await pub('post', '/auth/signout-all').set('X-Auth-User-Token', challenge).send({})).status).toBe(401);
    expect((await pub('post', '/auth/refresh').send({ refresh_token: challenge })).status).toBe(401);
    // Realtime: the connection takes any token, but nothing it resolves accepts this one.
    const rt = await RtClient.connect(await t.url(), t.project.id, { queryKey: t.project.publicKey });
    try {
      rt.send({ type: 'auth', token: challenge });
      await rt.next((m) => m.type === 'auth_ok');
      expect(await rt.subscribe('v', { collection: 'vault' })).toMatchObject({ type: 'error', error: 'unauthorized' });
    } finally {
      rt.ws.close();
    }
    // With the code, the same challenge gives a session at aal 2.
    const ok = await pub('post', '/auth/mfa/verify').send({ challenge, code: codeFor(totpSecret, stepNow() + 1) });
    expect(ok.status).toBe(200);
    expect(claimsOf(ok.body.access_token)).toMatchObject({ sub: uid, aal: 2 });
  });

  it('a rule requiring auth.token.aal == 2 refuses an aal-1 token and admits an aal-2 one', async () => {
    // aal 1: a user of the same project without a second factor (the rule's owner clause is theirs).
    const other = await pub('post', '/auth/signup').send({ email: 'vault-other@example.com', password: PASSWORD });
    const token1 = other.body.access_token as string;
    expect(claimsOf(token1).aal).toBe(1);
    const refused = await pub('post', '/collections/vault/records').set('X-Db-User-Token', token1).send({ data: { owner: other.body.user.id, body: 'x' } });
    expect(refused.status).toBe(403);
    expect(claimsOf(aal2Token).aal).toBe(2);
    const admitted = await pub('post', '/collections/vault/records').set('X-Db-User-Token', aal2Token).send({ data: { owner: uid, body: 'secret' } });
    expect(admitted.status).toBe(201);
    // The enrolling user's own session from before the factor was confirmed is gone (replaced at aal 2).
    expect((await pub('get', '/collections/vault/records').set('X-Db-User-Token', aal1Token)).status).toBe(401);
  });
});
