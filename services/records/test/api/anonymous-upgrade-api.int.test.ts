/**
 * Anonymous users and records: an anonymous user's records stay its own after it
 * upgrades to an address and a password, and rules tell anonymous tokens apart
 * (`auth.token.anonymous`) — through the real gateway, in both topologies.
 */
import request from 'supertest';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';

const PASSWORD = 'anonymous upgrade over http';
const NOTES = {
  name: 'notes',
  fields: { owner: { type: 'text' }, body: { type: 'text' } },
  rules: { read: 'record.owner == auth.uid', create: 'auth != null && data.owner == auth.uid' },
};
/** Only users who are not anonymous may sign the guestbook. */
const GUESTBOOK = { name: 'guestbook', fields: { body: { type: 'text' } }, rules: { read: 'true', create: 'auth != null && auth.token.anonymous != true' } };

let t: TestPlinth;
const at = (path: string) => `/v1/projects/${t.project.id}${path}`;
const pub = (method: 'get' | 'post', path: string) => request(t.app)[method](at(path)).set('Authorization', `Bearer ${t.project.publicKey}`);
const secret = (method: 'post' | 'patch', path: string) => request(t.app)[method](at(path)).set('Authorization', `Bearer ${t.project.secretKey}`);

beforeAll(async () => {
  t = await startTestPlinth();
  await secret('patch', '/settings/auth').send({ enabled: true, allow_anonymous: true, send_verification_on_signup: false }).expect(200);
  await secret('post', '/collections').send(NOTES).expect(201);
  await secret('post', '/collections').send(GUESTBOOK).expect(201);
});
afterAll(() => t.close());

describe('anonymous users and their records', () => {
  it('an anonymous user upgraded to a password keeps its uid and its records; its anonymous token ends; rules see auth.token.anonymous', async () => {
    const anon = await pub('post', '/auth/anonymous').send({});
    expect(anon.status).toBe(201);
    const uid = anon.body.user.id as string;
    const anonToken = anon.body.access_token as string;
    const note = await pub('post', '/collections/notes/records').set('X-Db-User-Token', anonToken).send({ data: { owner: uid, body: 'mine' } });
    expect(note.status).toBe(201);
    expect((await pub('post', '/collections/guestbook/records').set('X-Db-User-Token', anonToken).send({ data: { body: 'hi' } })).status).toBe(403);

    const up = await pub('post', '/auth/anonymous/upgrade').set('X-Auth-User-Token', anonToken).send({ email: 'upgraded@example.com', password: PASSWORD });
    expect(up.status).toBe(200);
    expect(up.body.user).toMatchObject({ id: uid, email: 'upgraded@example.com', is_anonymous: false });
    expect((await pub('get', '/collections/notes/records').set('X-Db-User-Token', anonToken)).status).toBe(401);

    const signedIn = await pub('post', '/auth/signin').send({ email: 'upgraded@example.com', password: PASSWORD });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user.id).toBe(uid);
    for (const token of [up.body.access_token as string, signedIn.body.access_token as string]) {
      const mine = await pub('get', '/collections/notes/records').set('X-Db-User-Token', token);
      expect(mine.status).toBe(200);
      expect(mine.body.records.map((r: { id: string }) => r.id)).toEqual([note.body.record.id]);
    }
    expect((await pub('post', '/collections/guestbook/records').set('X-Db-User-Token', signedIn.body.access_token).send({ data: { body: 'hi' } })).status).toBe(201);
  });
});
