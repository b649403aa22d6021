import { leadingAndTrailingPerTurn } from '../src/per-turn';

const turnEnds = () => new Promise<void>((r) => setImmediate(r));

it('runs at the first call of a turn at once, and once more at its end when called again meanwhile', async () => {
  const runs: string[] = [];
  const told = leadingAndTrailingPerTurn(() => runs.push('run'));
  told();
  expect(runs).toEqual(['run']);
  told();
  told();
  told();
  expect(runs).toEqual(['run']);
  await turnEnds();
  expect(runs).toEqual(['run', 'run']);
});

it('a lone call in a turn runs once, and the next turn starts afresh', async () => {
  const runs: number[] = [];
  let n = 0;
  const told = leadingAndTrailingPerTurn(() => runs.push(++n));
  told();
  await turnEnds();
  expect(runs).toEqual([1]);
  told();
  expect(runs).toEqual([1, 2]);
  await turnEnds();
  expect(runs).toEqual([1, 2]);
});
