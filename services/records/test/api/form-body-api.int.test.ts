/**
 * `curl -d '{"email":…,"password":…}'` without a JSON content type sends a form-encoded body.
 * Parsed as a form, the whole JSON text became one parameter name, and the validation error
 * naming that "unknown parameter" echoed the password. Every endpoint that takes a body refuses
 * a form body with 415 before reading it (only collection creation takes forms, per the
 * contract), and no answer contains the password. Through the real gateway, both topologies.
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { client, type Client } from './client';

let t: TestPlinth;
let api: Client;

const PASSWORD = 'form-secret-Pa55word';
const BODY = JSON.stringify({ email: 'form@body.example', password: PASSWORD, new_password: PASSWORD, data: { title: PASSWORD } });

beforeAll(async () => {
  t = await startTestPlinth();
  api = client(t);
  expect((await api.patch('/settings/auth', { enabled: true })).status).toBe(200);
  const made = await api.post('/collections', { name: 'forms', fields: { title: { type: 'text' } }, rules: { read: 'true', create: 'true', update: 'true', delete: 'true' } });
  expect(made.status).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

const ENDPOINTS: Array<[method: 'post' | 'patch', path: string]> = [
  ['post', '/auth/signup'],
  ['post', '/auth/signin'],
  ['post', '/auth/otp/request'],
  ['post', '/auth/otp/redeem'],
  ['post', '/auth/refresh'],
  ['post', '/auth/signout'],
  ['post', '/auth/signout-all'],
  ['post', '/auth/password/forgot'],
  ['post', '/auth/password/reset'],
  ['post', '/auth/password/change'],
  ['post', '/auth/email/change'],
  ['post', '/auth/email/confirm'],
  ['post', '/auth/verify/request'],
  ['post', '/auth/verify/confirm'],
  ['patch', '/auth/user'],
  ['post', '/auth/users'],
  ['patch', '/auth/users/usr_x'],
  ['post', '/auth/tokens'],
  ['patch', '/settings/auth'],
  ['post', '/collections/forms/records'],
  ['patch', '/collections/forms/records/rec_x'],
  ['patch', '/collections/forms'],
  ['post', '/collections/forms/subscribe'],
  ['post', '/collections/forms/rules/simulate'],
  ['post', '/collections/forms/rules/validate'],
];

describe('a form-encoded body where JSON is expected', () => {
  it.each(ENDPOINTS)('%s %s → 415 without a trace of the body', async (method, path) => {
    for (const key of [t.project.secretKey, t.project.publicKey]) {
      const res = await request(t.app)[method](`${api.base}${path}`)
        .set('Authorization', `Bearer ${key}`)
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(BODY);
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ error: 'unsupported_media_type' });
      expect(res.text).not.toContain(PASSWORD);
      expect(JSON.stringify(res.headers)).not.toContain(PASSWORD);
    }
  });

  it('collection creation still takes the form body the contract specifies', async () => {
    const res = await api.postForm('/collections', { name: 'formed', fields: JSON.stringify({ title: { type: 'text', required: true } }) });
    expect(res.status).toBe(201);
    expect(res.body.collection).toMatchObject({ name: 'formed', revision: 1 });
  });

  it('nothing was created or changed by the refused bodies', async () => {
    const records = await api.get('/collections/forms/records');
    expect(records.body.records).toEqual([]);
    const users = await api.get('/auth/users');
    expect(users.body.users).toEqual([]);
  });
});
