import type { Predicate } from '@plinth/shared';
import { createRulesPolicy } from '../../src/rules';
import type { AuthInfo } from '../../src/domain/access-policy';
import { ctx, postsCollection, user } from './fixtures';

const alice = user('usr_123');
const admin = user('usr_9', { claims: { role: 'admin', teams: ['red', 'blue'], level: 3 } });
const unverified = user('usr_5', { email_verified: false, email: 'eve@example.com' });

const policy = createRulesPolicy();
const callerName = (auth: AuthInfo | null): string => (auth === null ? 'anonymous' : auth.uid);

function residual(rule: string, auth: AuthInfo | null): Predicate {
  const collection = postsCollection({ read: rule });
  policy.validateRules(collection);
  return policy.readFilter(ctx(auth), collection);
}

describe('read rule → residual predicate', () => {
  const table: Array<[rule: string, auth: AuthInfo | null, expected: Predicate]> = [
    ['true', null, true],
    ['false', alice, false],
    ['record.owner == auth.uid', alice, ['owner', '==', 'usr_123']],
    ['auth.uid == record.owner', alice, ['owner', '==', 'usr_123']],
    ['record.owner == auth.uid', null, false],
    ['record.owner != auth.uid', null, false],
    ['!(record.owner == auth.uid)', null, false],
    ['!(record.owner == auth.uid)', alice, ['owner', '!=', 'usr_123']],
    ['record.owner != auth.uid', alice, ['owner', '!=', 'usr_123']],
    ['auth != null', alice, true],
    ['auth != null', null, false],
    ['auth == null', null, true],
    ['auth != null && record.owner == auth.uid', null, false],
    ['record.published == true || record.owner == auth.uid', null, ['published', '==', true]],
    ['record.published || record.owner == auth.uid', alice, { or: [['published', '==', true], ['owner', '==', 'usr_123']] }],
    ['record.published', null, ['published', '==', true]],
    ['!record.published', null, ['published', '==', false]],
    ['"x" in record.tags', null, ['tags', 'array-contains', 'x']],
    ['!("x" in record.tags)', null, { not: ['tags', 'array-contains', 'x'] }],
    ['record.team in ["red", "blue"]', null, ['team', 'in', ['red', 'blue']]],
    ['!(record.team in ["red"])', null, ['team', 'not-in', ['red']]],
    // stores take only non-empty lists without null for in: [] folds, null splits out
    ['record.team in []', null, false],
    ['!(record.team in [])', null, true],
    ['record.team in [null]', null, ['team', '==', null]],
    ['record.team in ["red", null]', null, { or: [['team', '==', null], ['team', 'in', ['red']]] }],
    ['!(record.team in ["red", null])', null, { and: [['team', '!=', null], ['team', 'not-in', ['red']]] }],
    ['record.team in auth.claims.teams', admin, ['team', 'in', ['red', 'blue']]],
    ['record.team in auth.claims.teams', alice, false],
    ['auth.claims.role == "admin"', admin, true],
    ['auth.claims.role == "admin"', alice, false],
    ['auth.claims.role == "admin"', null, false],
    ['auth.claims.role == "admin" || record.owner == auth.uid', alice, ['owner', '==', 'usr_123']],
    ['auth.claims.role == "admin" || record.owner == auth.uid', admin, true],
    ['auth.email_verified', unverified, false],
    ['auth.email_verified && record.published == true', alice, ['published', '==', true]],
    ['auth.email_verified && record.published == true', unverified, false],
    ['auth.email == "eve@example.com"', unverified, true],
    ['record.score > 10', null, ['score', '>', 10]],
    ['10 < record.score', null, ['score', '>', 10]],
    ['10 <= record.score', null, ['score', '>=', 10]],
    ['10 > record.score', null, ['score', '<', 10]],
    ['-1 >= record.score', null, ['score', '<=', -1]],
    ['!(record.score < 5)', null, { not: ['score', '<', 5] }],
    ['record.score > auth.claims.level', admin, ['score', '>', 3]],
    ['record.score > auth.claims.level', alice, false],
    ['record.publish_at <= request.time', null, ['publish_at', '<=', '2026-06-01T12:00:00.000Z']],
    ['record.title == null', null, ['title', '==', null]],
    ['record.meta == auth.claims.teams', admin, ['meta', '==', ['red', 'blue']]],
    ['record.id == "rec_1" && record.version >= 2', null, { and: [['id', '==', 'rec_1'], ['version', '>=', 2]] }],
    ['record.published || true', null, true],
    ['true && (false || record.owner == auth.uid)', alice, ['owner', '==', 'usr_123']],
    ['record.owner == auth.uid && true && record.published == true', alice, { and: [['owner', '==', 'usr_123'], ['published', '==', true]] }],
    ['(record.team == "red" && record.score > 1) && record.published', null, { and: [['team', '==', 'red'], ['score', '>', 1], ['published', '==', true]] }],
    ['record.team == "red" || (record.team == "blue" || record.owner == auth.uid)', alice, { or: [['team', '==', 'red'], ['team', '==', 'blue'], ['owner', '==', 'usr_123']] }],
    ['!(record.team == "red" || record.score > 1)', null, { and: [['team', '!=', 'red'], { not: ['score', '>', 1] }] }],
    ['!(record.team == "red" && auth.uid == "usr_123")', alice, ['team', '!=', 'red']],
    // Without a token `auth.uid == …` is an error, but `false && error` is false: records of other teams stay readable.
    ['!(record.team == "red" && auth.uid == "usr_123")', null, ['team', '!=', 'red']],
    ['1 == 1', null, true],
    ['"a" < "b"', null, true],
    ['[1, 2] == [1, 2]', null, true],
    ['2 in [1, 2]', null, true],
    ['request.time > "2026-01-01"', null, true],
    ['record.owner in [auth.uid, "usr_0"]', alice, ['owner', 'in', ['usr_123', 'usr_0']]],
    ['record.owner in [auth.uid, "usr_0"]', null, false],
  ];

  it.each(table.map(([rule, auth, expected]) => [rule, callerName(auth), auth, expected] as const))(
    '%s (caller %s)',
    (rule, _name, auth, expected) => {
      expect(residual(rule, auth)).toEqual(expected);
    },
  );
});

describe('read access without a read rule, and with a secret key', () => {
  it('denies every public caller when no read rule is set', () => {
    expect(policy.readFilter(ctx(alice), postsCollection({}))).toBe(false);
  });

  it('lets a secret key read everything, whatever the rule', () => {
    expect(policy.readFilter(ctx(null, 'secret'), postsCollection({ read: 'false' }))).toBe(true);
    expect(policy.readFilter(ctx(null, 'secret'), postsCollection({}))).toBe(true);
  });

  it('denies when a stored rule no longer fits the collection (a field it names was removed)', () => {
    const failures: string[] = [];
    const logged = createRulesPolicy({ onRuleFailure: ({ rule }) => failures.push(rule) });
    const collection = postsCollection({ read: 'record.gone == 1' });
    expect(logged.readFilter(ctx(alice), collection)).toBe(false);
    expect(failures).toEqual(['read']);
  });
});
