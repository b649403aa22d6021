/**
 * The EventBus contract (shared/src/event-bus/event-bus.ts), run against every adapter by a short
 * test file per adapter. `make` opens a bus on fresh storage; `reopen` opens a second bus on the
 * same storage, as another process would.
 */
import { asProjectId, type ChangeEvent, type EventBus, type EventRetention, type RecordDoc } from '@plinth/shared';

export interface EventBusFixture {
  bus: EventBus;
  /** Another instance on the same storage (another process in production). */
  reopen(): Promise<EventBus>;
  cleanUp(): Promise<void>;
}

const P = asProjectId('proj-a');
const Q = asProjectId('proj-b');

function rec(id: string, version = 1, extra: Record<string, string> = {}): RecordDoc {
  return { id, version, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', ...extra };
}

async function waitFor(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function describeEventBusContract(name: string, make: (retention?: EventRetention) => Promise<EventBusFixture>): void {
  describe(`EventBus contract: ${name}`, () => {
    let f: EventBusFixture;
    const extra: EventBus[] = [];
    afterEach(async () => {
      for (const b of extra.splice(0)) await b.close();
      await f.cleanUp();
    });

    it('assigns strictly increasing seqs per project, and reads them back in order with their payloads', async () => {
      f = await make();
      const seqs: number[] = [];
      for (let i = 0; i < 5; i++) {
        seqs.push(await f.bus.publish({ project: P, collection: 'notes', kind: 'create', record: rec(`rec_${i}`), committed_at: 1000 + i }));
        await f.bus.publish({ project: Q, collection: 'notes', kind: 'create', record: rec(`rec_q${i}`), committed_at: 1000 + i });
      }
      for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
      expect(await f.bus.head(P)).toBeGreaterThanOrEqual(seqs[4]!);
      const page = await f.bus.read(P, 'notes', 0);
      expect(page.trimmed).toBe(false);
      expect(page.done).toBe(true);
      expect(page.events.map((e) => e.seq)).toEqual(seqs);
      expect(page.events.map((e) => e.record?.id)).toEqual(['rec_0', 'rec_1', 'rec_2', 'rec_3', 'rec_4']);
      expect(page.events[0]).toMatchObject({ project: P, collection: 'notes', kind: 'create', committed_at: 1000 });
    });

    it('carries the previous record of updates and deletes, and collection changes', async () => {
      f = await make();
      await f.bus.publish({ project: P, collection: 'notes', kind: 'update', record: rec('rec_1', 2, { owner: 'b' }), previous: rec('rec_1', 1, { owner: 'a' }), committed_at: 1 });
      await f.bus.publish({ project: P, collection: 'notes', kind: 'delete', record: rec('rec_1', 2), previous: rec('rec_1', 2), committed_at: 2 });
      await f.bus.publish({ project: P, collection: 'notes', kind: 'collection', revision: 3, committed_at: 3 });
      const { events } = await f.bus.read(P, 'notes', 0);
      expect(events.map((e) => e.kind)).toEqual(['update', 'delete', 'collection']);
      expect(events[0]).toMatchObject({ record: { owner: 'b', version: 2 }, previous: { owner: 'a', version: 1 } });
      expect(events[2]).toMatchObject({ revision: 3 });
    });

    it('replays from a seq: exactly the later events, paged, in order', async () => {
      f = await make();
      const seqs: number[] = [];
      for (let i = 0; i < 7; i++) seqs.push(await f.bus.publish({ project: P, collection: 'c', kind: 'create', record: rec(`rec_${i}`), committed_at: i }));
      const got: ChangeEvent[] = [];
      let after = seqs[2]!;
      for (;;) {
        const page = await f.bus.read(P, 'c', after, { limit: 2 });
        expect(page.trimmed).toBe(false);
        got.push(...page.events);
        after = page.next;
        if (page.done) break;
      }
      expect(got.map((e) => e.seq)).toEqual(seqs.slice(3));
      const atHead = await f.bus.read(P, 'c', seqs[6]!);
      expect(atHead).toMatchObject({ events: [], trimmed: false, done: true });
    });

    it('reads one collection only, paged by count and by stored bytes, and counts what follows a position', async () => {
      f = await make();
      const mine: number[] = [];
      for (let i = 0; i < 6; i++) {
        mine.push(await f.bus.publish({ project: P, collection: 'mine', kind: 'create', record: rec(`rec_${i}`, 1, { body: 'x'.repeat(1000) }), committed_at: i }));
        await f.bus.publish({ project: P, collection: 'other', kind: 'create', record: rec(`rec_o${i}`), committed_at: i });
        await f.bus.publish({ project: Q, collection: 'mine', kind: 'create', record: rec(`rec_q${i}`), committed_at: i });
      }
      await f.bus.publish({ project: P, collection: 'mine', kind: 'collection', revision: 2, committed_at: 7 });
      const all = await f.bus.read(P, 'mine', 0);
      expect(all.events.map((e) => e.kind)).toEqual(['create', 'create', 'create', 'create', 'create', 'create', 'collection']);
      expect(all.events.slice(0, 6).map((e) => e.seq)).toEqual(mine);
      expect(all.bytes).toBeGreaterThan(6000);
      // About 2,000 bytes per page: each page ends with the event that passed the limit.
      const got: ChangeEvent[] = [];
      let after = 0;
      for (let pages = 0; ; pages++) {
        expect(pages).toBeLessThan(10);
        const page = await f.bus.read(P, 'mine', after, { maxBytes: 2000 });
        expect(page.bytes).toBeLessThan(2000 + 1500);
        got.push(...page.events);
        after = page.next;
        if (page.done) break;
      }
      expect(got.map((e) => e.seq)).toEqual(all.events.map((e) => e.seq));
      const counted = await f.bus.countAfter(P, 'mine', mine[1]!, 3);
      if (counted !== null) expect(counted).toBe(4); // five follow: counted up to atMost + 1
      if (counted !== null) expect(await f.bus.countAfter(P, 'mine', mine[4]!, 3)).toBe(2);
    });

    it('tails events appended after it started, also those written by another instance, in order', async () => {
      f = await make();
      await f.bus.publish({ project: P, collection: 'c', kind: 'create', record: rec('rec_before'), committed_at: 0 });
      const seen: ChangeEvent[] = [];
      const stop = await f.bus.tail((events) => seen.push(...events));
      const other = await f.reopen();
      extra.push(other);
      const published: number[] = [];
      for (let i = 0; i < 4; i++) {
        published.push(await (i % 2 ? other : f.bus).publish({ project: P, collection: 'c', kind: 'create', record: rec(`rec_${i}`), committed_at: i }));
      }
      await waitFor(() => seen.length >= 4, 'four tailed events');
      stop();
      expect(seen.map((e) => e.seq)).toEqual(published);
      expect(seen.map((e) => e.record?.id)).toEqual(['rec_0', 'rec_1', 'rec_2', 'rec_3']);
    });

    it('after trimming by count, reading from a trimmed position signals resync; a retained one does not', async () => {
      f = await make({ maxEvents: 100, maxAgeMs: 3_600_000 });
      const seqs: number[] = [];
      for (let i = 0; i < 400; i++) seqs.push(await f.bus.publish({ project: P, collection: 'c', kind: 'create', record: rec(`rec_${i}`), committed_at: Date.now() }));
      await f.bus.trim();
      expect((await f.bus.read(P, 'c', 0)).trimmed).toBe(true);
      expect((await f.bus.read(P, 'c', seqs[10]!)).trimmed).toBe(true);
      const recent = await f.bus.read(P, 'c', seqs[380]!);
      expect(recent.trimmed).toBe(false);
      expect(recent.events.map((e) => e.seq)).toEqual(seqs.slice(381));
    });

    it('after trimming by age, old positions signal resync', async () => {
      f = await make({ maxEvents: 100_000, maxAgeMs: 60_000 });
      const now = Date.now();
      const old = await f.bus.publish({ project: P, collection: 'c', kind: 'create', record: rec('rec_old'), committed_at: now - 120_000 });
      const old2 = await f.bus.publish({ project: P, collection: 'c', kind: 'create', record: rec('rec_old2'), committed_at: now - 90_000 });
      const fresh = await f.bus.publish({ project: P, collection: 'c', kind: 'create', record: rec('rec_new'), committed_at: now });
      await f.bus.trim(now);
      expect((await f.bus.read(P, 'c', old - 1)).trimmed).toBe(true);
      const fromOld2 = await f.bus.read(P, 'c', old2);
      expect(fromOld2.trimmed).toBe(false);
      expect(fromOld2.events.map((e) => e.seq)).toEqual([fresh]);
    });

    it('a position beyond the log signals resync (a seq the log never gave out)', async () => {
      f = await make();
      const seq = await f.bus.publish({ project: P, collection: 'c', kind: 'create', record: rec('rec_1'), committed_at: 0 });
      expect((await f.bus.read(P, 'c', seq + 1000)).trimmed).toBe(true);
    });

    it('purge forgets a project’s events, leaves other projects alone, and refuses old positions', async () => {
      f = await make();
      const old: number[] = [];
      const others: number[] = [];
      for (let i = 0; i < 3; i++) {
        old.push(await f.bus.publish({ project: P, collection: 'c', kind: 'create', record: rec(`rec_old${i}`, 1, { secret: 'old tenant' }), committed_at: Date.now() }));
        others.push(await f.bus.publish({ project: Q, collection: 'c', kind: 'create', record: rec(`rec_q${i}`), committed_at: Date.now() }));
      }
      expect(await f.bus.purgedThrough(P)).toBe(0);
      const through = await f.bus.purge(P);
      expect(through).toBeGreaterThan(old[2]!);
      expect(await f.bus.purgedThrough(P)).toBe(through);
      expect(await f.bus.purgedThrough(Q)).toBe(0);
      // Every old position of the project now means "resync", and no old event comes back.
      for (const after of [0, old[0]!, old[2]!]) {
        const page = await f.bus.read(P, 'c', after);
        expect(page.trimmed).toBe(true);
        expect(page.events).toEqual([]);
      }
      // Another instance (another process) sees the same.
      const other = await f.reopen();
      extra.push(other);
      expect(await other.read(P, 'c', 0)).toMatchObject({ events: [], trimmed: true });
      // The other project keeps its events and positions (a position before the purged events
      // may be answered with a conservative resync: the purged ones were the oldest retained).
      expect((await f.bus.read(Q, 'c', 0)).events.map((e) => e.seq)).toEqual(others);
      const q = await f.bus.read(Q, 'c', others[0]!);
      expect(q.trimmed).toBe(false);
      expect(q.events.map((e) => e.seq)).toEqual(others.slice(1));

      // Re-created: seqs continue above the purge point; a reader from the head gets only new events.
      const head = await f.bus.head(P);
      expect(head).toBeGreaterThanOrEqual(through);
      const fresh = await f.bus.publish({ project: P, collection: 'c', kind: 'create', record: rec('rec_new'), committed_at: Date.now() });
      expect(fresh).toBeGreaterThan(through);
      const fromHead = await f.bus.read(P, 'c', head);
      expect(fromHead.trimmed).toBe(false);
      expect(fromHead.events.map((e) => e.record?.id)).toEqual(['rec_new']);
      // An old tenant's position still answers "resync", never the new tenant's events as a replay.
      expect((await f.bus.read(P, 'c', old[2]!)).trimmed).toBe(true);
      expect((await other.read(P, 'c', old[1]!)).trimmed).toBe(true);
      // Purging again (another replica) is harmless.
      expect(await other.purge(P)).toBeGreaterThan(fresh);
      expect((await f.bus.read(P, 'c', 0)).events).toEqual([]);
      expect((await f.bus.read(Q, 'c', 0)).events.map((e) => e.seq)).toEqual(others);
    });

    it('a purge point survives trimming as long as it matters', async () => {
      f = await make({ maxEvents: 100_000, maxAgeMs: 60_000 });
      const now = Date.now();
      const old = await f.bus.publish({ project: P, collection: 'c', kind: 'create', record: rec('rec_old'), committed_at: now });
      await f.bus.publish({ project: Q, collection: 'c', kind: 'create', record: rec('rec_q'), committed_at: now - 120_000 });
      await f.bus.purge(P);
      await f.bus.publish({ project: Q, collection: 'c', kind: 'create', record: rec('rec_q2'), committed_at: now });
      await f.bus.trim(now);
      expect((await f.bus.read(P, 'c', old)).trimmed).toBe(true);
      expect((await f.bus.read(P, 'c', 0)).trimmed).toBe(true);
      // Everything aged out: old positions still resync, and the purge point is still known.
      const through = await f.bus.purgedThrough(P);
      await f.bus.trim(now + 3_600_000);
      expect((await f.bus.read(P, 'c', old)).trimmed).toBe(true);
      expect(await f.bus.purgedThrough(P)).toBe(through);
      expect(await f.bus.read(P, 'c', await f.bus.head(P))).toMatchObject({ events: [], trimmed: false });
    });
  });
}
