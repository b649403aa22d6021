import { Redis } from 'ioredis';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { startCluster, type Cluster } from '@plinth/testing/cluster';
import { startWebhookReceiver, type WebhookReceiver } from '@plinth/testing/webhook-receiver';
import { enableAuth, projectCall, type ProjectAccess, type SessionBody } from '../e2e/support/api';
import { OwnRedis } from './support/own-redis';

/**
 * Fault: the webhook queue's Redis refuses or is down while users sign up, in the cluster
 * topology (two auth replicas, BullMQ). `user.created` is written in the user's own transaction
 * (docs/webhooks.md "User events") and handed to the queue once Redis takes jobs again: the
 * receiver gets it exactly once. Redis comes back empty (no persistence): the relay offers it the
 * events it had handed over before again, and records, which keeps its deliveries, sends none twice.
 */
describe('user events while Redis is down', () => {
  /** The webhook queue's name: its keys (`bull:faults-hooks:*`) are the ones refused below. */
  const QUEUE = 'faults-hooks';
  const NONCES = 'faults-userevents:nonce:';
  const PASSWORD = 'correct horse 1';
  let redis: OwnRedis;
  let admin: Redis;
  let cluster: Cluster;
  let receiver: WebhookReceiver;
  let p: ProjectAccess;

  /** The test's own admin connection, authenticated before the ACL narrows what `default` may touch. */
  async function connectAdmin(): Promise<Redis> {
    const c = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    await c.call('ACL', 'SETUSER', 'faults-admin', 'on', 'nopass', '~*', '&*', '+@all');
    await c.call('AUTH', 'faults-admin', 'any');
    return c;
  }
  /** Every key but the webhook queue's: the services work, the queue refuses every job. */
  const refuseWebhookQueue = () => admin.call('ACL', 'SETUSER', 'default', 'resetkeys', '~[^b]*', '~b[^u]*', '~bul[^l]*', '~bull:[^f]*');
  const allowAll = () => admin.call('ACL', 'SETUSER', 'default', 'allkeys');

  const signUp = (email: string) =>
    projectCall<SessionBody & { error?: string }>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email, password: PASSWORD } });

  /** The user.created deliveries the receiver got for `email`, one per webhook-id. */
  const createdFor = (email: string) =>
    receiver.received
      .map((r) => ({ id: r.headers['webhook-id'], body: JSON.parse(r.body) as { type: string; data: { user: { email: string } } } }))
      .filter((r) => r.body.type === 'user.created' && r.body.data.user.email === email);

  const authLogs = () => cluster.processes.filter((x) => x.name.startsWith('auth')).map((x) => x.output()).join('\n');

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    redis = await OwnRedis.start();
    admin = await connectAdmin();
    cluster = await startCluster({
      replicas: { auth: 2, records: 2 },
      env: {
        REDIS_URL: redis.url,
        PLINTH_NONCE_PREFIX: NONCES,
        PLINTH_WEBHOOK_QUEUE: QUEUE,
        PLINTH_WEBHOOK_ALLOW_HOSTS: '127.0.0.2',
        PLINTH_WEBHOOK_BACKOFF_MS: '50',
        PLINTH_WEBHOOK_POLL_MS: '100',
        PLINTH_WEBHOOK_DISPATCH_MS: '20',
      },
    });
    p = { url: cluster.url, ...(await cluster.createProject('faults-userevents')) };
    await enableAuth(p);
    const hook = await projectCall(p, 'POST', '/webhooks', { key: p.secretKey, body: { url: receiver.url, events: ['user.created'] } });
    expect(hook.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await cluster?.stop();
    admin?.disconnect();
    await redis?.kill();
    await receiver?.close();
  });

  it('the queue refuses the job while a user signs up: the sign-up succeeds, and user.created arrives once the queue takes jobs, exactly once', async () => {
    await refuseWebhookQueue();
    let first;
    try {
      first = await signUp('refused@example.com');
      expect(first.status).toBe(201);
      // The relay tried and the queue refused (before, this event was lost here).
      await waitFor('the relay meeting the refusing queue', () => (authLogs().includes('user event not handed to the webhook queue yet') ? true : undefined));
      expect(createdFor('refused@example.com')).toEqual([]);
    } finally {
      await allowAll();
    }
    await receiver.until(() => createdFor('refused@example.com').length > 0, 30_000);
    // A later event has arrived after it, so a duplicate of the first would have had its chance.
    expect((await signUp('after@example.com')).status).toBe(201);
    await receiver.until(() => createdFor('after@example.com').length > 0, 30_000);
    expect(createdFor('refused@example.com')).toHaveLength(1);
    expect(createdFor('refused@example.com')[0]!.body.data.user.email).toBe('refused@example.com');
  }, 90_000);

  it('Redis is down while a user is created: user.created arrives once Redis is back (empty), exactly once; earlier events are not sent twice', async () => {
    const refusals = () => authLogs().split('user event not handed to the webhook queue yet').length;
    const before = refusals();
    await redis.kill();
    admin.disconnect();
    // Sessions live in Redis, so a sign-up answers 503 and makes no user; a user made with the secret key needs no session.
    expect((await signUp('refused-signup@example.com')).status).toBe(503);
    const made = await projectCall(p, 'POST', '/auth/users', { key: p.secretKey, body: { email: 'during@example.com', password: PASSWORD } });
    expect(made.status).toBe(201);
    await waitFor('the relay meeting the Redis that is down', () => refusals() > before);
    await redis.start();
    admin = await connectAdmin();
    await receiver.until(() => createdFor('during@example.com').length > 0, 30_000);
    // One more event after it: the events handed over before the outage, offered again to the
    // empty Redis, have been fanned out again by now, and records sent none of them twice.
    expect((await signUp('later@example.com')).status).toBe(201);
    await receiver.until(() => createdFor('later@example.com').length > 0, 30_000);
    for (const email of ['refused@example.com', 'after@example.com', 'during@example.com', 'later@example.com']) expect([email, createdFor(email).length]).toEqual([email, 1]);
    expect(createdFor('refused-signup@example.com')).toEqual([]);
  }, 120_000);
});
