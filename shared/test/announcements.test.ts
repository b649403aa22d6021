import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  RedisAnnouncements,
  SqliteAnnouncements,
  asProjectId,
  openSqlite,
  type AnnouncementEvent,
  type Announcements,
} from '@plinth/shared';
import { waitFor } from '@plinth/shared/testing/wait-for';
import { OwnRedis } from '../../test/faults/support/own-redis';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const P = asProjectId('ann-test');

/** Two processes' buses: one publishes, both must hear it; and each one's listener log. */
interface Pair {
  a: Announcements;
  b: Announcements;
  close(): Promise<void>;
}

function heard(bus: Announcements): AnnouncementEvent[] {
  const log: AnnouncementEvent[] = [];
  bus.subscribe((e) => log.push(e));
  return log;
}

function describeAnnouncements(name: string, open: () => Promise<Pair>): void {
  describe(`announcements: ${name}`, () => {
    let pair: Pair;
    beforeEach(async () => (pair = await open()));
    afterEach(async () => pair.close());

    it('the publisher hears its announcement before publish resolves; the other process soon after', async () => {
      const [fromA, fromB] = [heard(pair.a), heard(pair.b)];
      await pair.a.publish({ kind: 'project-deleted', project: P });
      expect(fromA).toEqual([{ kind: 'project-deleted', project: P }]);
      await waitFor('the other process hears it', () => fromB.length > 0, { timeoutMs: 2000 });
      expect(fromB).toEqual([{ kind: 'project-deleted', project: P }]);
    });

    it('announcements arrive in the order they were made', async () => {
      const fromB = heard(pair.b);
      await pair.a.publish({ kind: 'signing-keys-changed', project: P });
      await pair.a.publish({ kind: 'project-deleted', project: P });
      await waitFor('both announcements', () => fromB.length >= 2, { timeoutMs: 2000 });
      expect(fromB.map((e) => e.kind)).toEqual(['signing-keys-changed', 'project-deleted']);
    });
  });
}

let dir: string;
beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-ann-'))));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describeAnnouncements('SQLite, two connections to one file (two workers)', async () => {
  const file = path.join(dir, `${randomBytes(4).toString('hex')}.db`);
  const [da, db] = [openSqlite(file), openSqlite(file)];
  const [a, b] = [new SqliteAnnouncements(da, 20), new SqliteAnnouncements(db, 20)];
  return {
    a,
    b,
    close: async () => {
      await a.close();
      await b.close();
      da.close();
      db.close();
    },
  };
});

describeAnnouncements('Redis pub/sub, two clients (two replicas)', async () => {
  const channel = `test:announcements:${randomBytes(6).toString('hex')}`;
  const [a, b] = [await RedisAnnouncements.start(REDIS_URL, undefined, channel), await RedisAnnouncements.start(REDIS_URL, undefined, channel)];
  return {
    a,
    b,
    close: async () => {
      await a.close();
      await b.close();
    },
  };
});

it('SQLite: a process that slept past the retained announcements hears `missed`', async () => {
  const file = path.join(dir, 'missed.db');
  const [da, db] = [openSqlite(file), openSqlite(file)];
  let now = 0;
  const sleeper = new SqliteAnnouncements(db, 3_600_000); // polls only when told
  const writer = new SqliteAnnouncements(da, 3_600_000, () => now);
  const log = heard(sleeper);
  await writer.publish({ kind: 'project-deleted', project: P });
  now = 2 * 3_600_000; // the first row is now past the retention: the next publish trims it
  await writer.publish({ kind: 'signing-keys-changed', project: P });
  sleeper.poll();
  expect(log).toEqual([{ kind: 'missed' }, { kind: 'signing-keys-changed', project: P }]);
  await writer.close();
  await sleeper.close();
  da.close();
  db.close();
});

it('SQLite: catchUp hears another process\'s announcement at once, without waiting for the poll', async () => {
  const file = path.join(dir, 'catch-up.db');
  const [da, db] = [openSqlite(file), openSqlite(file)];
  const reader = new SqliteAnnouncements(db, 3_600_000);
  const writer = new SqliteAnnouncements(da, 3_600_000);
  const log = heard(reader);
  reader.catchUp();
  expect(log).toEqual([]);
  await writer.publish({ kind: 'project-deleted', project: P });
  reader.catchUp();
  expect(log).toEqual([{ kind: 'project-deleted', project: P }]);
  reader.catchUp(); // nothing new: heard once
  expect(log).toHaveLength(1);
  await writer.close();
  await reader.close();
  da.close();
  db.close();
});

it('Redis: a replica whose subscription dropped (Redis restarted) hears `missed` once it is back, then announcements again', async () => {
  const own = await OwnRedis.start();
  const [a, b] = [await RedisAnnouncements.start(own.url), await RedisAnnouncements.start(own.url)];
  try {
    const log = heard(b);
    await own.restartEmpty();
    await waitFor('missed', () => log.some((e) => e.kind === 'missed'), { timeoutMs: 10_000 });
    // Publish until the re-subscribed replica hears it (the publisher may reconnect a moment later).
    await waitFor(
      'an announcement after the reconnect',
      async () => {
        await a.publish({ kind: 'project-deleted', project: P }).catch(() => undefined);
        return log.some((e) => e.kind === 'project-deleted');
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
  } finally {
    await a.close();
    await b.close();
    await own.kill();
  }
});
