/**
 * The user events' outbox and its relay (docs/webhooks.md "User events"): the event row is
 * written in the user's own transaction, and the relay hands it to the webhook queue, keeping
 * it pending while the queue refuses. On SQLite and on the MongoDB stand-in.
 */
import pino from 'pino';
import { asProjectId, ConflictError, openSqlite, type WebhookJob } from '@plinth/shared';
import { createMingoDb, injectFault } from '@plinth/shared/testing/mingo-db';
import { newUserRecord } from '../src/domain/new-user';
import { MongoUserStore } from '../src/store/mongo-user-store';
import { SqliteUserStore } from '../src/store/sqlite-user-store';
import type { UserStore } from '../src/store/user-store';
import { UserEventRelay } from '../src/user-event-relay';

const project = asProjectId('user-events');
const T = Date.UTC(2100, 0, 1);
const silent = pino({ level: 'silent' });

/** A webhook queue that keeps jobs by id (a repeat is ignored, as on BullMQ) and can be made to refuse (Redis down). */
class FakeQueue {
  readonly jobs = new Map<string, WebhookJob>();
  refusing = false;
  offers = 0;
  async enqueue(job: WebhookJob): Promise<void> {
    this.offers += 1;
    if (this.refusing) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
    if (!this.jobs.has(job.id)) this.jobs.set(job.id, job);
  }
}

interface Backend {
  name: string;
  open(): Promise<{ store: UserStore; failNextCommit(): void }>;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    async open() {
      const db = openSqlite(':memory:');
      const store = new SqliteUserStore(db);
      return {
        store,
        // The event row is written, then the statement aborts: the whole transaction rolls back.
        failNextCommit: () =>
          db.exec(`CREATE TRIGGER fail_events AFTER INSERT ON auth_user_events BEGIN SELECT RAISE(ABORT, 'disk I/O error (test)'); END;`),
      };
    },
  },
  {
    name: 'mongo (stand-in)',
    async open() {
      const db = createMingoDb();
      const store = await MongoUserStore.open(db);
      return { store, failNextCommit: () => injectFault(db, { op: 'commitTransaction', error: new Error('connection reset (test)') }) };
    },
  },
];

describe.each(backends)('user events on $name', (backend) => {
  it('a created and a deleted user each leave one event (the user without its hash) that the relay hands to the queue as f_<event id>', async () => {
    const { store } = await backend.open();
    const queue = new FakeQueue();
    const relay = new UserEventRelay(store.events, queue, silent);
    const user = newUserRecord('a@example.com', {}, T);
    await store.createUser(project, { ...user, password_hash: 'secret-hash' });
    expect(await store.deleteUser(project, user.id)).toBe(true);
    expect(await store.deleteUser(project, user.id)).toBe(false);
    expect(await relay.pass()).toBe(true);
    const jobs = [...queue.jobs.values()];
    expect(jobs.map((j) => [j.kind, j.project, j.event.type, (j.event.data.user as { id: string }).id])).toEqual([
      ['fanout', project, 'user.created', user.id],
      ['fanout', project, 'user.deleted', user.id],
    ]);
    for (const j of jobs) expect(j.id).toBe(`f_${j.event.id}`);
    expect(JSON.stringify(jobs)).not.toContain('secret-hash');
    expect(await store.events.pending(10)).toEqual([]);
  });

  it('while the queue refuses, the event stays pending and is handed over once it takes jobs again, exactly once', async () => {
    const { store } = await backend.open();
    const queue = new FakeQueue();
    const relay = new UserEventRelay(store.events, queue, silent);
    const user = newUserRecord('b@example.com', {}, T);
    queue.refusing = true;
    await store.createUser(project, user);
    expect(await relay.pass()).toBe(false);
    expect(await relay.pass()).toBe(false);
    expect(queue.jobs.size).toBe(0);
    expect((await store.events.pending(10)).map((e) => e.event.type)).toEqual(['user.created']);
    queue.refusing = false;
    expect(await relay.pass()).toBe(true);
    expect(await relay.pass()).toBe(true);
    expect([...queue.jobs.values()].map((j) => [j.event.type, (j.event.data.user as { email: string }).email])).toEqual([['user.created', 'b@example.com']]);
    expect(await store.events.pending(10)).toEqual([]);
  });

  it('after a queue outage, events handed over before it are offered again (a Redis that came back empty gets them back)', async () => {
    const { store } = await backend.open();
    const queue = new FakeQueue();
    const relay = new UserEventRelay(store.events, queue, silent);
    await store.createUser(project, newUserRecord('c@example.com', {}, T));
    expect(await relay.pass()).toBe(true);
    const [handed] = [...queue.jobs.keys()];
    // Redis restarts without its data: the job is gone, and the queue refuses for a while.
    queue.jobs.clear();
    queue.refusing = true;
    await store.createUser(project, newUserRecord('d@example.com', {}, T));
    expect(await relay.pass()).toBe(false);
    queue.refusing = false;
    expect(await relay.pass()).toBe(true);
    expect(queue.jobs.has(handed!)).toBe(true);
    expect([...queue.jobs.values()].map((j) => (j.event.data.user as { email: string }).email).sort()).toEqual(['c@example.com', 'd@example.com']);
    // Offered once: a later pass offers nothing more.
    const offers = queue.offers;
    expect(await relay.pass()).toBe(true);
    expect(queue.offers).toBe(offers);
  });

  it('an event written in a transaction that rolled back is never sent, and neither is one of a refused create', async () => {
    const { store, failNextCommit } = await backend.open();
    const queue = new FakeQueue();
    const relay = new UserEventRelay(store.events, queue, silent);
    await store.createUser(project, newUserRecord('e@example.com', {}, T));
    failNextCommit();
    const lost = newUserRecord('f@example.com', {}, T);
    // Not `rejects.toThrow()`: better-sqlite3's errors may come from another jest realm, and would not count as errors there.
    const outcome = await store.createUser(project, lost).then(() => 'created', (err: { message?: string }) => `refused: ${err.message}`);
    expect(outcome).toMatch(/^refused: .*\(test\)$/);
    expect(await store.getUser(project, lost.id)).toBeNull();
    await expect(store.createUser(project, newUserRecord('E@example.com', {}, T))).rejects.toThrow(ConflictError);
    expect(await relay.pass()).toBe(true);
    expect([...queue.jobs.values()].map((j) => (j.event.data.user as { email: string }).email)).toEqual(['e@example.com']);
  });

  it('handed-over events are kept for the retention, then trimmed; pending ones are never trimmed', async () => {
    const { store } = await backend.open();
    let now = T;
    const queue = new FakeQueue();
    const relay = new UserEventRelay(store.events, queue, silent, { retentionMs: 3_600_000, now: () => now });
    await store.createUser(project, newUserRecord('g@example.com', {}, T));
    expect(await relay.pass()).toBe(true);
    queue.refusing = true;
    await store.createUser(project, newUserRecord('h@example.com', {}, T));
    now += 3_600_000 + 60_001;
    expect(await store.events.trim(now - 3_600_000)).toBe(1);
    expect((await store.events.handedAfter('', 10)).length).toBe(0);
    expect((await store.events.pending(10)).map((e) => (e.event.data.user as { email: string }).email)).toEqual(['h@example.com']);
  });

  it('a deleted project takes its events with it', async () => {
    const { store } = await backend.open();
    await store.createUser(project, newUserRecord('i@example.com', {}, T));
    await store.purgeProject(project);
    expect(await store.events.pending(10)).toEqual([]);
  });
});

describe('UserEventRelay running', () => {
  it('is woken by a write, backs off while the queue refuses, and hands the event over once it takes jobs', async () => {
    const store = new SqliteUserStore(openSqlite(':memory:'));
    const queue = new FakeQueue();
    const relay = new UserEventRelay(store.events, queue, silent, { pollMs: 60_000, backoffMs: 5, maxBackoffMs: 20 });
    queue.refusing = true;
    relay.start();
    await store.createUser(project, newUserRecord('j@example.com', {}, T));
    relay.wake();
    while (queue.offers < 3) await new Promise((r) => setTimeout(r, 5));
    queue.refusing = false;
    while (queue.jobs.size === 0) await new Promise((r) => setTimeout(r, 5));
    // Woken by a write, not by the minute-long poll.
    await store.createUser(project, newUserRecord('k@example.com', {}, T));
    relay.wake();
    while (queue.jobs.size < 2) await new Promise((r) => setTimeout(r, 5));
    await relay.stop();
    expect([...queue.jobs.values()].map((j) => (j.event.data.user as { email: string }).email)).toEqual(['j@example.com', 'k@example.com']);
  });
});
