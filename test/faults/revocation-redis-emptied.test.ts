import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { enableAuth, projectCall, type ProjectAccess, type SessionBody } from '../e2e/support/api';
import { OwnRedis } from './support/own-redis';
import { createOwnerNotes, ownerNotes } from './support/owner-notes';

/**
 * Fault: Redis comes back empty (a restart without persistence, a failover to a lagging replica,
 * an eviction) after a user signed out. The sign-out's revocation marker is gone with the rest;
 * records must still refuse the old access token (fail closed), not accept it as "not revoked".
 */
describe('revocation when Redis loses its data', () => {
  let redis: OwnRedis;
  let cluster: Cluster;
  let p: ProjectAccess;

  beforeAll(async () => {
    redis = await OwnRedis.start();
    cluster = await startCluster({ env: { REDIS_URL: redis.url } });
    p = { url: cluster.url, ...(await cluster.createProject('faults-revoke')) };
    await enableAuth(p, { send_verification_on_signup: false });
    await createOwnerNotes(p);
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    await redis?.kill();
  });

  const { signUp, noteOf, read } = ownerNotes(() => p);

  it('refuses a signed-out user\'s access token on records after Redis restarts empty', async () => {
    const session = await signUp('gone@example.com');
    const id = await noteOf(session.user.id);
    expect((await read(id, session.access_token)).status).toBe(200);

    const out = await projectCall(p, 'POST', '/auth/signout', { key: p.publicKey, body: { refresh_token: session.refresh_token } });
    expect(out.status).toBe(200);
    expect((await read(id, session.access_token)).status).toBe(401);

    await redis.restartEmpty();

    // Wait until records talks to the new Redis again (a read answers something other than 503).
    let res = await read(id, session.access_token);
    for (let i = 0; i < 100 && res.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await read(id, session.access_token);
    }
    expect(res).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    // …on every request, not once.
    for (let i = 0; i < 5; i++) expect((await read(id, session.access_token)).status).toBe(401);
    // auth agrees: the session is gone.
    const me = await projectCall(p, 'GET', '/auth/user', { key: p.publicKey, userToken: session.access_token });
    expect(me.status).toBe(401);
  });

  it('a user who signs in again after the data loss reads records normally', async () => {
    const signIn = await projectCall<SessionBody>(p, 'POST', '/auth/signin', {
      key: p.publicKey,
      body: { email: 'gone@example.com', password: 'correct horse 1' },
    });
    expect(signIn.status).toBe(200);
    const id = await noteOf(signIn.body.user.id);
    expect((await read(id, signIn.body.access_token)).status).toBe(200);
  });
});
