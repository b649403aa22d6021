/**
 * Auth's mail outbox over a Redis mail queue: each mail is kept in the users' database (sealed)
 * until the queue delivered it, and enqueued again when the queue lost it — here the queue is
 * real BullMQ on the shared Redis under a name of its own, and "lost" is what a Redis that
 * restarted empty leaves: none of the queue's keys. On SQLite and on the MongoDB stand-in.
 */
import pino from 'pino';
import { Redis } from 'ioredis';
import { asProjectId, BullMqMailQueue, newId, openSqlite, type MailJob } from '@plinth/shared';
import { createMingoDb } from '@plinth/shared/testing/mingo-db';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { deleteMatching, scanKeys } from '@plinth/testing/cluster';
import { RedisSafeMailOutbox } from '../src/mail/redis-safe-mail-outbox';
import { MongoUserStore } from '../src/store/mongo-user-store';
import { SqliteUserStore } from '../src/store/sqlite-user-store';
import type { UserStore } from '../src/store/user-store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const project = asProjectId('mail-outbox');
const KEY = 'k'.repeat(64);
const silent = pino({ level: 'silent' });

let redis: Redis;
const queueNames: string[] = [];
beforeAll(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
});
afterAll(async () => {
  for (const name of queueNames) await deleteMatching(redis, `bull:${name}:*`);
  redis.disconnect();
});

const backends: Array<{ name: string; open(): Promise<UserStore> }> = [
  { name: 'sqlite', open: async () => new SqliteUserStore(openSqlite(':memory:')) },
  { name: 'mongo (stand-in)', open: async () => MongoUserStore.open(createMingoDb()) },
];

function mail(to: string): MailJob {
  return { id: newId('mail_'), project, kind: 'reset', to, data: { token: `secret-token-${to}` }, created_at: new Date().toISOString() };
}

describe.each(backends)('mail outbox on $name', (backend) => {
  let users: UserStore;
  let queue: BullMqMailQueue;
  let queueName: string;
  let clock: number;
  let outbox: RedisSafeMailOutbox;
  const delivered: MailJob[] = [];

  beforeEach(async () => {
    users = await backend.open();
    queueName = `test-mailout-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    queueNames.push(queueName);
    queue = new BullMqMailQueue({ redisUrl: REDIS_URL, queueName, attempts: 2, backoffMs: 50, logger: silent });
    clock = Date.now();
    outbox = new RedisSafeMailOutbox(users.mails, queue, KEY, silent, { checkMs: 1000, graceMs: 1000, now: () => clock });
    delivered.length = 0;
  });
  afterEach(async () => {
    await outbox.stop();
    await queue.close();
    await deleteMatching(redis, `bull:${queueName}:*`);
  });

  const consume = () => queue.start(async (job) => void delivered.push(job));
  const rows = async () => (await users.mails.after('', 100)).map((r) => r.id);

  it('keeps each mail sealed in the database while the queue holds it, and deletes it once delivered', async () => {
    const m = mail('a@x.io');
    await outbox.enqueue(m);
    const [row] = await users.mails.after('', 10);
    expect(row).toMatchObject({ id: m.id, project });
    expect(row!.sealed).not.toContain('secret-token');
    expect(await queue.jobState(m.id)).toBe('pending');
    expect(await outbox.check()).toEqual({ requeued: 0, done: 0 });
    expect(await rows()).toEqual([m.id]);

    consume();
    await waitFor('the mail delivered', () => delivered.length === 1);
    expect(delivered).toEqual([m]);
    await waitFor('the job done', async () => (await queue.jobState(m.id)) === 'done');
    expect(await outbox.check()).toEqual({ requeued: 0, done: 1 });
    expect(await rows()).toEqual([]);
  });

  it('enqueues again, once each, the mails a Redis that came back empty lost; each is delivered once', async () => {
    const mails = [mail('a@x.io'), mail('b@x.io'), mail('c@x.io')];
    for (const m of mails) await outbox.enqueue(m);
    // What a Redis restarted without its data holds of this queue: nothing.
    await deleteMatching(redis, `bull:${queueName}:*`);
    expect(await scanKeys(redis, `bull:${queueName}:*`)).toEqual([]);
    for (const m of mails) expect(await queue.jobState(m.id)).toBe('missing');

    // Too fresh: a first enqueue may still be under way.
    expect(await outbox.check()).toEqual({ requeued: 0, done: 0 });
    clock += 1000;
    // Two auth replicas checking at once make one job per mail.
    const twice = await Promise.all([outbox.check(), outbox.check()]);
    expect(twice[0]!.requeued + twice[1]!.requeued).toBeGreaterThanOrEqual(3);
    consume();
    await waitFor('three mails delivered', () => delivered.length === 3);
    await new Promise((r) => setTimeout(r, 300));
    // The same mails, opened from the sealed rows: the same ids, addresses and tokens.
    const byId = (a: MailJob, b: MailJob) => a.id.localeCompare(b.id);
    expect([...delivered].sort(byId)).toEqual([...mails].sort(byId));
    await waitFor('every row deleted', async () => {
      await outbox.check();
      return (await rows()).length === 0;
    });
  });

  it('withdraws a mail whose enqueue the queue refused: the caller answers 503 and it never arrives later', async () => {
    const refusing = new RedisSafeMailOutbox(users.mails, { enqueue: async () => Promise.reject(new Error('connect ECONNREFUSED')), jobState: (id) => queue.jobState(id) }, KEY, silent, { now: () => clock });
    await expect(refusing.enqueue(mail('a@x.io'))).rejects.toThrow('ECONNREFUSED');
    expect(await rows()).toEqual([]);
  });

  it('refuses a malformed job before storing it', async () => {
    await expect(outbox.enqueue({ ...mail('a@x.io'), to: 'not an address' })).rejects.toThrow(TypeError);
    expect(await rows()).toEqual([]);
  });

  it('drops, with an error, a stored mail sealed under another key, and gives up mails older than the retention', async () => {
    const other = new RedisSafeMailOutbox(users.mails, queue, 'o'.repeat(64), silent, { now: () => clock });
    const m = mail('a@x.io');
    await other.enqueue(m);
    await deleteMatching(redis, `bull:${queueName}:*`);
    clock += 1000;
    expect(await outbox.check()).toEqual({ requeued: 0, done: 1 });
    expect(await queue.jobState(m.id)).toBe('missing');

    const old = new RedisSafeMailOutbox(users.mails, queue, KEY, silent, { now: () => clock, retentionMs: 60_000 });
    await old.enqueue(mail('b@x.io'));
    await deleteMatching(redis, `bull:${queueName}:*`);
    clock += 61_000;
    expect(await old.check()).toEqual({ requeued: 0, done: 0 });
    expect(await rows()).toEqual([]);
  });

  it("deletes a project's stored mails with the project", async () => {
    await outbox.enqueue(mail('a@x.io'));
    await users.purgeProject(project);
    expect(await rows()).toEqual([]);
  });

  it('checks as it starts and then on its own, until stopped', async () => {
    const m = mail('a@x.io');
    await outbox.enqueue(m);
    await deleteMatching(redis, `bull:${queueName}:*`);
    clock += 1000;
    const running = new RedisSafeMailOutbox(users.mails, queue, KEY, silent, { checkMs: 50, graceMs: 0, now: () => clock });
    running.start();
    await waitFor('the job enqueued again', async () => (await queue.jobState(m.id)) === 'pending');
    consume();
    await waitFor('the row deleted', async () => (await rows()).length === 0);
    await running.stop();
    expect(delivered).toEqual([m]);
  });
});
