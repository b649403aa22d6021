import { newId, newSecret } from '../src/ids';

describe('ids', () => {
  it('makes prefixed, URL-safe ids with at least 96 random bits, ordered by time', () => {
    const a = newId('rec_', 1_700_000_000_000);
    const b = newId('rec_', 1_700_000_000_001);
    expect(a).toMatch(/^rec_[0-9a-z]{26}$/);
    expect(a < b).toBe(true);
    const many = new Set(Array.from({ length: 1000 }, () => newId('rec_', 1_700_000_000_000)));
    expect(many.size).toBe(1000);
  });

  it('within one millisecond, ids sort in the order they were made; the next millisecond draws new random bits', () => {
    const made = Array.from({ length: 1000 }, () => newId('evt_', 1_700_000_000_500));
    expect([...made].sort()).toEqual(made);
    const next = newId('evt_', 1_700_000_000_501);
    expect(next > made[999]!).toBe(true);
    // Not the last one plus one: the random part of a new millisecond is drawn again.
    const again = [newId('evt_', 1_700_000_000_502), newId('evt_', 1_700_000_000_503)];
    expect(again[0]!.slice(14)).not.toBe(again[1]!.slice(14));
  });

  it('makes secrets of 256 bits by default', () => {
    const s = newSecret('frt_');
    expect(s).toMatch(/^frt_[A-Za-z0-9_-]{43}$/);
  });
});
