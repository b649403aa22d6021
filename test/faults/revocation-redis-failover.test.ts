import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { enableAuth, projectCall, type ProjectAccess, type SessionBody } from '../e2e/support/api';
import { OwnRedis } from './support/own-redis';
import { TcpProxy } from './support/tcp-proxy';

/**
 * Fault: a sign-out is made while the Redis replica lags behind its primary, then the replica is
 * promoted and the services are pointed at it (a failover behind one address: the connections
 * are reset and reconnect to the new primary). The replica never received the revocation; the
 * durable revocation log (auth's database) must bring it back, so that the signed-out access
 * token reads nothing and the refresh token mints nothing — not for a single request.
 *
 * The replica replicates through a proxy the test can hold (the lag); the services reach Redis
 * through another proxy the test points at the promoted replica.
 */
describe('revocation survives a failover to a lagging Redis replica', () => {
  let primary: OwnRedis;
  let replica: OwnRedis;
  let replication: TcpProxy;
  let front: TcpProxy;
  let cluster: Cluster;
  let p: ProjectAccess;
  /** Where the replica writes the primary's snapshot during the first sync (not the working directory). */
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-failover-'));

  const admin = (r: OwnRedis) => new Redis(r.port, '127.0.0.1', { maxRetriesPerRequest: 1 });

  beforeAll(async () => {
    primary = await OwnRedis.start(['--dir', dir]);
    replica = await OwnRedis.start(['--dir', dir]);
    replication = await TcpProxy.start(primary.port);
    front = await TcpProxy.start(primary.port);
    const r = admin(replica);
    await r.replicaof('127.0.0.1', replication.port);
    r.disconnect();
    cluster = await startCluster({ env: { REDIS_URL: front.url } });
    p = { url: cluster.url, ...(await cluster.createProject('faults-failover')) };
    await enableAuth(p, { send_verification_on_signup: false });
    const notes = await projectCall(p, 'POST', '/collections', {
      key: p.secretKey,
      body: { name: 'notes', fields: { owner: { type: 'text', required: true } }, rules: { read: 'auth != null && record.owner == auth.uid' } },
    });
    expect(notes.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
    await front?.close();
    await replication?.close();
    await replica?.kill();
    await primary?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Waits until the replica has everything the primary has (the session, the record). */
  async function replicaCaughtUp(): Promise<void> {
    const [pr, rr] = [admin(primary), admin(replica)];
    try {
      for (let i = 0; i < 200; i++) {
        const offset = /master_repl_offset:(\d+)/.exec(await pr.info('replication'))?.[1];
        const info = await rr.info('replication');
        if (/master_link_status:up/.test(info) && /slave_repl_offset:(\d+)/.exec(info)?.[1] === offset) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('the replica did not catch up');
    } finally {
      pr.disconnect();
      rr.disconnect();
    }
  }

  const read = (id: string, token: string) =>
    projectCall<{ error?: string }>(p, 'GET', `/collections/notes/records/${id}`, { key: p.publicKey, dbUserToken: token });

  it('after the failover the signed-out access and refresh tokens are refused: 0 accepted', async () => {
    const signUp = await projectCall<SessionBody>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email: 'lag@example.com', password: 'correct horse 1' } });
    expect(signUp.status).toBe(201);
    const session = signUp.body;
    const note = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/notes/records', {
      key: p.secretKey,
      body: { data: { owner: session.user.id } },
    });
    expect(note.status).toBe(201);
    const id = note.body.record.id;
    expect((await read(id, session.access_token)).status).toBe(200);
    await replicaCaughtUp();

    // The replica lags from here on: it receives nothing more from the primary.
    replication.hold();
    const out = await projectCall(p, 'POST', '/auth/signout', { key: p.publicKey, body: { refresh_token: session.refresh_token } });
    expect(out.status).toBe(200);
    expect((await read(id, session.access_token)).status).toBe(401);
    const lagging = admin(replica);
    // The replica still holds the session as live: this is the state the failover exposes.
    expect(await lagging.hget(`plinth:auth:sess:${p.id}:${JSON.parse(Buffer.from(session.access_token.split('.')[1]!, 'base64url').toString()).sid}`, 'revoked_at')).toBeNull();

    // Failover: the replica becomes the primary, the old primary is gone, the services reconnect.
    await lagging.replicaof('NO', 'ONE');
    lagging.disconnect();
    await primary.kill();
    front.retarget(replica.port);

    // From the first request on, every answer is a refusal (401) or "try again" (503), never a
    // read, a user or a new session: records with the access token, auth with it, and a refresh.
    const me = () => projectCall(p, 'GET', '/auth/user', { key: p.publicKey, userToken: session.access_token });
    const refresh = () => projectCall(p, 'POST', '/auth/refresh', { key: p.publicKey, body: { refresh_token: session.refresh_token } });
    const answers: Array<[string, number]> = [];
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      answers.push(['read', (await read(id, session.access_token)).status], ['user', (await me()).status], ['refresh', (await refresh()).status]);
      if (answers.length >= 9 && answers.slice(-9).every(([, s]) => s === 401)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(answers.filter(([, s]) => s !== 401 && s !== 503)).toEqual([]);
    expect(answers.slice(-3)).toEqual([['read', 401], ['user', 401], ['refresh', 401]]);

    // The new primary serves everyone else: a fresh sign-in reads the note.
    const again = await projectCall<SessionBody>(p, 'POST', '/auth/signin', { key: p.publicKey, body: { email: 'lag@example.com', password: 'correct horse 1' } });
    expect(again.status).toBe(200);
    expect((await read(id, again.body.access_token)).status).toBe(200);
  }, 60_000);
});
