import type { RecordDoc } from '@plinth/shared';
import { createRulesPolicy } from '../../src/rules';
import type { AuthInfo } from '../../src/domain/access-policy';
import { ctx, postsCollection, rec, user } from './fixtures';

const alice = user('usr_1');
const bob = user('usr_2', { email_verified: false });
const admin = user('usr_9', { claims: { role: 'admin', teams: ['red'] } });
const policy = createRulesPolicy();

type Caller = AuthInfo | null;

describe('create rules (data = the record as it would be stored)', () => {
  const table: Array<[rule: string, caller: Caller, data: RecordDoc, allowed: boolean]> = [
    ['data.owner == auth.uid', alice, rec({ owner: 'usr_1' }), true],
    ['data.owner == auth.uid', alice, rec({ owner: 'usr_2' }), false],
    ['data.owner == auth.uid', null, rec({ owner: 'usr_1' }), false],
    ['auth != null', bob, rec({ owner: 'x' }), true],
    ['auth != null', null, rec({ owner: 'x' }), false],
    ['auth.email_verified', bob, rec({ owner: 'usr_2' }), false],
    ['auth.email_verified', alice, rec({ owner: 'usr_1' }), true],
    ['data.score >= 0 && data.score <= 100', null, rec({ owner: 'x', score: 50 }), true],
    ['data.score >= 0 && data.score <= 100', null, rec({ owner: 'x', score: 101 }), false],
    // type mismatch: a string is neither >= 0 nor <= 100
    ['data.score >= 0 && data.score <= 100', null, rec({ owner: 'x', score: '50' }), false],
    // a missing field is null, and null is not ordered
    ['data.score >= 0', null, rec({ owner: 'x' }), false],
    ['data.title == null', null, rec({ owner: 'x' }), true],
    ['data.title != null', null, rec({ owner: 'x' }), false],
    ['"news" in data.tags', null, rec({ owner: 'x', tags: ['news', 'tech'] }), true],
    ['"news" in data.tags', null, rec({ owner: 'x', tags: ['tech'] }), false],
    ['"news" in data.tags', null, rec({ owner: 'x' }), false],
    ['data.team in auth.claims.teams', admin, rec({ owner: 'x', team: 'red' }), true],
    ['data.team in auth.claims.teams', alice, rec({ owner: 'x', team: 'red' }), false],
    ['auth.claims.role == "admin"', admin, rec({ owner: 'x' }), true],
    ['auth.claims.role == "admin"', alice, rec({ owner: 'x' }), false],
    ['auth.claims.role != "admin"', alice, rec({ owner: 'x' }), true],
    // without a token, auth.* is an error and the rule denies, even under !
    ['!(auth.claims.role == "admin")', null, rec({ owner: 'x' }), false],
    ['auth == null || data.owner == auth.uid', null, rec({ owner: 'x' }), true],
    ['data.publish_at <= request.time', null, rec({ owner: 'x', publish_at: '2026-05-31T00:00:00.000Z' }), true],
    ['data.publish_at <= request.time', null, rec({ owner: 'x', publish_at: '2026-07-01T00:00:00.000Z' }), false],
    ['data.meta == ["a", 1]', null, rec({ owner: 'x', meta: ['a', 1] }), true],
    ['data.published', null, rec({ owner: 'x', published: true }), true],
    // a non-boolean used as a condition is an error → deny
    ['data.meta', null, rec({ owner: 'x', meta: 'yes' }), false],
    ['false', admin, rec({ owner: 'x' }), false],
  ];

  it.each(table)('%s', (rule, caller, data, allowed) => {
    const collection = postsCollection({ create: rule });
    policy.validateRules(collection);
    expect(policy.canCreate(ctx(caller), collection, data)).toBe(allowed);
  });
});

describe('update rules (record = before, data = after)', () => {
  const mine = rec({ owner: 'usr_1', title: 'a', version: 3, tags: ['x'] });
  const table: Array<[rule: string, caller: Caller, before: RecordDoc, after: RecordDoc, allowed: boolean]> = [
    ['record.owner == auth.uid', alice, mine, { ...mine, title: 'b' }, true],
    ['record.owner == auth.uid', bob, mine, { ...mine, title: 'b' }, false],
    ['record.owner == auth.uid', null, mine, { ...mine, title: 'b' }, false],
    ['record.owner == auth.uid && data.owner == record.owner', alice, mine, { ...mine, owner: 'usr_2' }, false],
    ['record.owner == auth.uid && data.owner == record.owner', alice, mine, { ...mine, title: 'c' }, true],
    ['data.tags == record.tags', alice, mine, { ...mine, tags: ['x'] }, true],
    ['data.tags == record.tags', alice, mine, { ...mine, tags: ['x', 'y'] }, false],
    ['record.version < data.version', alice, mine, { ...mine, version: 4 }, true],
    ['record.owner == auth.uid || auth.claims.role == "admin"', admin, mine, mine, true],
    ['record.owner == auth.uid || auth.claims.role == "admin"', bob, mine, mine, false],
  ];

  it.each(table)('%s', (rule, caller, before, after, allowed) => {
    const collection = postsCollection({ update: rule });
    policy.validateRules(collection);
    expect(policy.canUpdate(ctx(caller), collection, before, after)).toBe(allowed);
  });
});

describe('delete rules', () => {
  const table: Array<[rule: string, caller: Caller, record: RecordDoc, allowed: boolean]> = [
    ['record.owner == auth.uid', alice, rec({ owner: 'usr_1' }), true],
    ['record.owner == auth.uid', alice, rec({ owner: 'usr_2' }), false],
    ['record.owner == auth.uid', null, rec({ owner: 'usr_1' }), false],
    ['record.published == false && record.owner == auth.uid', alice, rec({ owner: 'usr_1', published: true }), false],
    ['auth.claims.role == "admin"', admin, rec({ owner: 'usr_1' }), true],
  ];

  it.each(table)('%s', (rule, caller, record, allowed) => {
    const collection = postsCollection({ delete: rule });
    policy.validateRules(collection);
    expect(policy.canDelete(ctx(caller), collection, record)).toBe(allowed);
  });
});

describe('missing rules and the secret key', () => {
  const collection = postsCollection({});
  const doc = rec({ owner: 'usr_1' });

  it('denies every write when the rule is missing', () => {
    expect(policy.canCreate(ctx(alice), collection, doc)).toBe(false);
    expect(policy.canUpdate(ctx(alice), collection, doc, doc)).toBe(false);
    expect(policy.canDelete(ctx(alice), collection, doc)).toBe(false);
  });

  it('allows every write with the secret key', () => {
    const denyAll = postsCollection({ create: 'false', update: 'false', delete: 'false' });
    expect(policy.canCreate(ctx(null, 'secret'), denyAll, doc)).toBe(true);
    expect(policy.canUpdate(ctx(null, 'secret'), denyAll, doc, doc)).toBe(true);
    expect(policy.canDelete(ctx(null, 'secret'), denyAll, doc)).toBe(true);
  });

  it('denies (and does not throw) when a stored rule does not parse', () => {
    const broken = postsCollection({ create: 'data.owner ==' });
    expect(policy.canCreate(ctx(alice), broken, doc)).toBe(false);
  });
});
