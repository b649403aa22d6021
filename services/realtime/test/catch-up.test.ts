/**
 * The pieces of a catch-up on their own: what a replay sends for each record's history in the
 * window (as the record and the rules are now), and the gate that bounds catch-ups at once.
 */
import type { ChangeEvent, Predicate, RecordDoc } from '@plinth/shared';
import { ReplayCompactor } from '../src/catch-up';
import { CatchUpGate } from '../src/catch-up-gate';

const publicOnly: Predicate = ['public', '==', true];

let seq = 0;
function rec(id: string, version: number, isPublic: boolean): RecordDoc {
  return { id, version, created_at: 'x', updated_at: 'x', public: isPublic, title: `v${version}` };
}
function ev(kind: 'create' | 'update' | 'delete', record: RecordDoc, previous?: RecordDoc): ChangeEvent {
  return { project: 'p' as ChangeEvent['project'], collection: 'c', kind, record, ...(previous ? { previous } : {}), committed_at: 0, seq: ++seq };
}

describe('ReplayCompactor: one delivery per record, as it is now', () => {
  const a1 = rec('a', 1, true);
  const a2 = rec('a', 2, true);
  const a2private = rec('a', 2, false);
  const a1private = rec('a', 1, false);
  it.each([
    ['created and still readable', [ev('create', a1)], ['create', 1, true]],
    ['created, updated: the last version as a create', [ev('create', a1), ev('update', a2, a1)], ['create', 2, true]],
    ['held, updated', [ev('update', a2, a1)], ['update', 2, true]],
    ['held, made private', [ev('update', a2private, a1)], ['leave', 2, false]],
    ['held, deleted: no data', [ev('delete', a1, a1)], ['delete', 1, false]],
    ['created, deleted: nothing', [ev('create', a1), ev('delete', a1, a1)], null],
    ['created, made private: nothing', [ev('create', a1), ev('update', a2private, a1)], null],
    ['private, made public: enter', [ev('update', a2, a1private)], ['enter', 2, true]],
    ['private, deleted: nothing', [ev('delete', a1private, a1private)], null],
  ] as const)('%s', (_name, events, expected) => {
    const c = new ReplayCompactor(publicOnly);
    for (const e of events) c.add(e);
    const { events: out } = c.deliveries();
    if (expected === null) {
      expect(out).toEqual([]);
      return;
    }
    const [kind, version, withData] = expected;
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ kind, seq: events[events.length - 1]!.seq, record: { id: 'a', version } });
    expect('title' in out[0]!.record).toBe(withData);
  });

  it('orders records by their last change', () => {
    const c = new ReplayCompactor(true);
    const b = rec('b', 1, true);
    c.add(ev('create', a1));
    c.add(ev('create', b));
    c.add(ev('update', a2, a1));
    expect(c.deliveries().events.map((e) => e.record.id)).toEqual(['b', 'a']);
  });
});

describe('CatchUpGate', () => {
  const gate = () => new CatchUpGate({ perProject: 2, perProcess: 3, waitMs: 200, maxWaiting: 2 });

  it('one per connection, perProject per project, perProcess in all; the next waits its turn', async () => {
    const g = gate();
    const a = await g.acquire('p', 'c1');
    const b = await g.acquire('p', 'c2');
    expect(a && b).toBeTruthy();
    const sameConnection = g.acquire('q', 'c1');
    const thirdOfProject = g.acquire('p', 'c3');
    const other = await g.acquire('q', 'c4'); // another project still gets one
    expect(other).toBeTruthy();
    a!();
    const next = await sameConnection; // c1's turn again, and the process has room
    expect(next).toBeTruthy();
    b!();
    expect(await thirdOfProject).toBeTruthy();
  });

  it('a catch-up that waits past waitMs, or finds the waiting line full, gets no turn (null)', async () => {
    const g = gate();
    for (const c of ['c1', 'c2']) expect(await g.acquire('p', c)).toBeTruthy();
    const waits = [g.acquire('p', 'c3'), g.acquire('p', 'c4')];
    expect(await g.acquire('p', 'c5')).toBeNull(); // line full
    expect(await Promise.all(waits)).toEqual([null, null]); // waited too long
  });
});
