import { InlineQueryBudget } from '../src/store/sqlite/inline-query-budget';

describe('InlineQueryBudget', () => {
  let now = 0;
  const budget = (sliceMs: number) => new InlineQueryBudget({ sliceMs, maxShare: 0.05, now: () => now });
  beforeEach(() => {
    now = 1_000_000;
  });

  it('lets queries start on the event loop until overruns have taken 5 % of the second', () => {
    const b = budget(2);
    for (let i = 0; i < 24; i++) {
      expect(b.allows()).toBe(true);
      b.overran(2);
    }
    expect(b.allows()).toBe(true); // 48 ms spent of 50
    b.overran(2);
    expect(b.allows()).toBe(false);
    now += 999;
    expect(b.allows()).toBe(false);
    now += 1; // the next second
    expect(b.allows()).toBe(true);
  });

  it('queries that finish within the slice cost nothing of the share', () => {
    const b = budget(2);
    for (let i = 0; i < 10_000; i++) expect(b.allows()).toBe(true);
  });

  it('a slice of 0 sends every query to a reader', () => {
    expect(budget(0).allows()).toBe(false);
  });
});
