import type { Predicate, RecordDoc } from '@plinth/shared';
import { matchesPredicate } from '../../src/rules';
import { rec } from './fixtures';

const full = rec({ id: 'rec_full', owner: 'usr_1', score: 5, title: 'Hello', tags: ['a', 'b'], meta: ['x', 1], team: null });
const empty = rec({ id: 'rec_empty' });
const odd = rec({ id: 'rec_odd', owner: 7, score: '5', tags: 'a', meta: { k: 1, j: [2] } });

/** [predicate, ids expected to match among full, empty, odd] */
const table: Array<[Predicate, string[]]> = [
  [true, ['rec_full', 'rec_empty', 'rec_odd']],
  [false, []],
  [['owner', '==', 'usr_1'], ['rec_full']],
  // missing field = null
  [['title', '==', null], ['rec_empty', 'rec_odd']],
  [['team', '==', null], ['rec_full', 'rec_empty', 'rec_odd']],
  // != is the exact negation of ==, so a missing field is != "usr_1"
  [['owner', '!=', 'usr_1'], ['rec_empty', 'rec_odd']],
  [['title', '!=', null], ['rec_full']],
  // ordering only between numbers or between strings
  [['score', '>', 4], ['rec_full']],
  [['score', '>', '4'], ['rec_odd']],
  [['score', '<=', 5], ['rec_full']],
  [['score', '<', null], []],
  [['score', '>=', true], []],
  [['title', '<', 'Hi'], ['rec_full']],
  [['title', '>=', 'a'], []],
  // in / not-in (negations of each other; a missing field is null)
  [['owner', 'in', ['usr_1', 'usr_2']], ['rec_full']],
  [['owner', 'in', [null]], ['rec_empty']],
  [['owner', 'not-in', ['usr_1']], ['rec_empty', 'rec_odd']],
  [['owner', 'in', []], []],
  [['owner', 'not-in', []], ['rec_full', 'rec_empty', 'rec_odd']],
  [['owner', 'in', 'usr_1'], []],
  // whole-value equality: a list field is not == one of its elements
  [['tags', '==', 'a'], ['rec_odd']],
  [['tags', '==', ['a', 'b']], ['rec_full']],
  [['tags', '==', ['b', 'a']], []],
  [['meta', '==', ['x', 1]], ['rec_full']],
  [['tags', 'in', [['a', 'b'], 'z']], ['rec_full']],
  // array-contains(-any): false on fields that are not lists
  [['tags', 'array-contains', 'a'], ['rec_full']],
  [['tags', 'array-contains', 'c'], []],
  [['tags', 'array-contains-any', ['c', 'b']], ['rec_full']],
  [['tags', 'array-contains-any', []], []],
  [['meta', 'array-contains', 1], ['rec_full']],
  // composition
  [{ and: [['owner', '==', 'usr_1'], ['score', '>', 1]] }, ['rec_full']],
  [{ or: [['owner', '==', 7], ['title', '==', 'Hello']] }, ['rec_full', 'rec_odd']],
  [{ not: ['tags', 'array-contains', 'a'] }, ['rec_empty', 'rec_odd']],
  [{ not: ['score', '<', 5] }, ['rec_full', 'rec_empty', 'rec_odd']],
  [{ and: [] }, ['rec_full', 'rec_empty', 'rec_odd']],
  [{ or: [] }, []],
];

const docs: RecordDoc[] = [full, empty, odd];

describe('matchesPredicate semantics (the stores are held to it by record-store.contract.ts and rules/property.test.ts)', () => {
  it.each(table)('%j', (predicate, expected) => {
    expect(docs.filter((d) => matchesPredicate(d, predicate)).map((d) => d.id)).toEqual(expected);
  });

  it('compares objects by value, whatever the key order', () => {
    expect(matchesPredicate(odd, ['meta', '==', { j: [2], k: 1 }])).toBe(true);
    expect(matchesPredicate(odd, ['meta', '==', { k: 1 }])).toBe(false);
  });

  it('orders strings by code point (UTF-8 byte order), not by UTF-16 unit', () => {
    const emoji = rec({ title: '\u{1F600}' });
    // U+FF5E sorts below U+1F600 by code point, above it by UTF-16 unit (0xD83D).
    expect(matchesPredicate(emoji, ['title', '>', '\uFF5E'])).toBe(true);
  });
});
