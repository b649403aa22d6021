import type { Predicate } from '@plinth/shared';
import { andP, notP, orP } from '../../src/rules';

const a: Predicate = ['a', '==', 1];
const b: Predicate = ['b', '<', 2];

describe('predicate builders simplify', () => {
  it.each<[string, Predicate, Predicate]>([
    ['true && P', andP(true, a), a],
    ['false && P', andP(false, a), false],
    ['and of nothing', andP(), true],
    ['nested and', andP(andP(a, b), a), { and: [a, b, a] }],
    ['false || P', orP(false, a), a],
    ['true || P', orP(a, true), true],
    ['or of nothing', orP(), false],
    ['nested or', orP(a, orP(b, a)), { or: [a, b, a] }],
    ['!true', notP(true), false],
    ['!(a == 1)', notP(a), ['a', '!=', 1]],
    ['!(a in [1])', notP(['a', 'in', [1]]), ['a', 'not-in', [1]]],
    ['!(b < 2) is not b >= 2', notP(b), { not: b }],
    ['!!P', notP(notP(b)), b],
    ['!(P && Q)', notP(andP(a, b)), { or: [['a', '!=', 1], { not: b }] }],
    ['!(P || Q)', notP(orP(a, b)), { and: [['a', '!=', 1], { not: b }] }],
  ])('%s', (_name, actual, expected) => {
    expect(actual).toEqual(expected);
  });
});
