import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { startWebhookReceiver, type WebhookReceiver } from '@plinth/testing/webhook-receiver';
import { enableAuth, projectCall, type ProjectAccess, type SessionBody } from '../e2e/support/api';
import { OwnRedis } from './support/own-redis';
import { createOwnerNotes, ownerNotes } from './support/owner-notes';
import { createFeed, outcome, ResumingSubscriber, storedFeed } from './support/realtime-convergence';

/**
 * Restore drill for Redis (docs/operators.md "Cluster: MongoDB's tools, and what Redis holds"):
 * Redis holds nothing the durable store cannot rebuild. Several users are signed in, one signed
 * out, a realtime subscriber is connected; then the cluster's Redis (the test's own server) is
 * restarted EMPTY. Every signed-in user's access token and refresh token still work — on auth and
 * on records, which reads sessions from Redis only — the signed-out user's stay refused, and the
 * subscriber ends holding every stored record (from events, or a snapshot after resync_required).
 * Webhook deliveries waiting for a retry when Redis lost their jobs are delivered: the next retry
 * is 10 minutes away, so only the dispatcher's re-enqueueing of pending deliveries can send them.
 */
describe('sessions and realtime across a Redis restarted empty (cluster)', () => {
  let redis: OwnRedis;
  let cluster: Cluster;
  let p: ProjectAccess;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    redis = await OwnRedis.start();
    receiver = await startWebhookReceiver();
    cluster = await startCluster({
      replicas: { auth: 2, realtime: 1 },
      env: {
        REDIS_URL: redis.url,
        PLINTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.2',
        PLINTH_WEBHOOK_BACKOFF_MS: '600000',
        PLINTH_WEBHOOK_DISPATCH_MS: '20',
        PLINTH_WEBHOOK_REQUEUE_MS: '300',
      },
    });
    p = { url: cluster.url, ...(await cluster.createProject('rebuild')) };
    await enableAuth(p, { send_verification_on_signup: false });
    await createOwnerNotes(p);
    expect(await createFeed(p)).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await receiver?.close();
    await redis?.kill();
  });

  const { signUp, noteOf, read } = ownerNotes(() => p);
  const me = (token: string) => projectCall<{ user?: { id: string } }>(p, 'GET', '/auth/user', { key: p.publicKey, userToken: token });
  const refresh = (token: string) => projectCall<SessionBody>(p, 'POST', '/auth/refresh', { key: p.publicKey, body: { refresh_token: token } });
  const writeFeed = async (n: number) => {
    const res = await projectCall(p, 'POST', '/collections/feed/records', { key: p.secretKey, body: { data: { n } } });
    expect(res.status).toBe(201);
  };
  /** Answers other than 503: the first moments after the restart, session reads wait for the rebuild. */
  const settled = async <T>(ask: () => Promise<{ status: number } & T>): Promise<{ status: number } & T> => {
    let res = await ask();
    for (let i = 0; i < 200 && res.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await ask();
    }
    return res;
  };

  it('signed-in users keep working (access and refresh tokens), the signed-out one stays out, the subscriber misses nothing', async () => {
    const users = [];
    for (const name of ['ada', 'bob', 'cyd']) {
      const session = await signUp(`${name}@example.com`);
      users.push({ session, note: await noteOf(session.user.id) });
    }
    // One refreshed before the loss: its rotated token is the one that must work after it.
    const bobFirstToken = users[1]!.session.refresh_token;
    const bobRefreshed = await refresh(bobFirstToken);
    expect(bobRefreshed.status).toBe(200);
    users[1]!.session = bobRefreshed.body;
    const gone = await signUp('gone@example.com');
    const goneNote = await noteOf(gone.user.id);
    expect((await projectCall(p, 'POST', '/auth/signout', { key: p.publicKey, body: { refresh_token: gone.refresh_token } })).status).toBe(200);
    expect((await read(goneNote, gone.access_token)).status).toBe(401);

    const sub = new ResumingSubscriber(p);
    await sub.connect();
    // A webhook whose receiver fails every first attempt: the deliveries wait for a retry.
    receiver.answer(503);
    const hook = await projectCall<{ webhook: { id: string } }>(p, 'POST', '/webhooks', {
      key: p.secretKey,
      body: { url: receiver.url, events: ['record.created'], collections: ['feed'] },
    });
    expect(hook.status).toBe(201);
    for (let i = 0; i < 5; i++) await writeFeed(i);
    await receiver.until((got) => got.length >= 5, 30_000);
    const pending = await projectCall<{ deliveries: Array<{ event_id: string; attempts: number }> }>(p, 'GET', `/webhooks/${hook.body.webhook.id}/deliveries?status=pending`, {
      key: p.secretKey,
    });
    expect(pending.body.deliveries.map((d) => d.attempts)).toEqual([1, 1, 1, 1, 1]);
    receiver.answer(200);

    await redis.restartEmpty();

    // Records reads the sessions from Redis only: they are there again, rebuilt by auth.
    for (const u of users) {
      expect((await settled(() => read(u.note, u.session.access_token))).status).toBe(200);
      expect(await settled(() => me(u.session.access_token))).toMatchObject({ status: 200, body: { user: { id: u.session.user.id } } });
    }
    expect((await settled(() => read(goneNote, gone.access_token))).status).toBe(401);
    expect((await settled(() => me(gone.access_token))).status).toBe(401);
    expect((await settled(() => refresh(gone.refresh_token))).status).toBe(401);

    // Refresh tokens: the current one rotates; its new access token works everywhere.
    for (const u of users) {
      const next = await settled(() => refresh(u.session.refresh_token));
      expect(next.status).toBe(200);
      expect((await read(u.note, next.body.access_token)).status).toBe(200);
      u.session = next.body;
    }
    // Reuse detection is intact: bob's first refresh token (rotated twice since) ends his session.
    expect((await refresh(bobFirstToken)).status).toBe(401);
    expect((await read(users[1]!.note, users[1]!.session.access_token)).status).toBe(401);
    expect((await read(users[0]!.note, users[0]!.session.access_token)).status).toBe(200);

    // Realtime: writes after the loss reach the subscriber, on its connection or after a resume.
    for (let i = 5; i < 10; i++) await writeFeed(i);
    await sub.reconnect();
    const expected = await storedFeed(p);
    expect(expected.size).toBe(10);
    const o = await outcome(sub, expected);
    expect({ missing: o.missing, extra: o.extra, duplicates: o.duplicates }).toEqual({ missing: [], extra: [], duplicates: 0 });
    sub.close();

    // Webhooks: the 5 pending before the loss and the 5 made after it, each delivered once.
    const delivered = () => receiver.received.filter((r) => r.status === 200).map((r) => r.headers['webhook-id']);
    await receiver.until(() => new Set(delivered()).size === 10, 30_000);
    const failedFirst = new Set(receiver.received.filter((r) => r.status === 503).map((r) => r.headers['webhook-id']));
    expect(failedFirst.size).toBe(5);
    for (const id of failedFirst) expect(delivered()).toContain(id);
    expect(delivered()).toHaveLength(10);
  }, 120_000);
});
