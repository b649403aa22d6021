import { ForbiddenError } from '@plinth/shared';
import { createRulesPolicy, resolveSubscription } from '../../src/rules';
import { ctx, postsCollection, user } from './fixtures';

const policy = createRulesPolicy();
const ownerOnly = postsCollection({ read: 'record.owner == auth.uid || record.published' });
const alice = user('usr_1', { exp: 1_900_000_000 });

describe('resolveSubscription', () => {
  it('ANDs the client where with the read rule resolved for this user, expiring with the token', () => {
    const sub = resolveSubscription(policy, {
      collection: ownerOnly,
      where: ['team', '==', 'red'],
      ctx: ctx(alice),
      limit: 20,
    });
    expect(sub).toEqual({
      collection: 'posts',
      revision: 3,
      predicate: {
        and: [
          ['team', '==', 'red'],
          { or: [['owner', '==', 'usr_1'], ['published', '==', true]] },
        ],
      },
      limit: 20,
      expires_at: '2030-03-17T17:46:40.000Z',
    });
  });

  it('resolves for an anonymous caller without expiry, and defaults the limit to 50', () => {
    const sub = resolveSubscription(policy, { collection: ownerOnly, ctx: ctx(null) });
    expect(sub).toMatchObject({ predicate: ['published', '==', true], limit: 50, expires_at: null });
  });

  it('passes the where through untouched for a secret key', () => {
    const sub = resolveSubscription(policy, { collection: ownerOnly, where: ['score', '>', 1], ctx: ctx(alice, 'secret') });
    expect(sub).toMatchObject({ predicate: ['score', '>', 1], expires_at: null });
  });

  it('is forbidden when the read rule resolves to false for the caller', () => {
    const verifiedOnly = postsCollection({ read: 'auth.email_verified' });
    expect(() => resolveSubscription(policy, { collection: verifiedOnly, ctx: ctx(null) })).toThrow(ForbiddenError);
    expect(() => resolveSubscription(policy, { collection: postsCollection({}), ctx: ctx(alice) })).toThrow(ForbiddenError);
  });

  it.each([0, 1001, 2.5])('refuses limit %p with a 400 naming the field', (limit) => {
    expect(() => resolveSubscription(policy, { collection: ownerOnly, ctx: ctx(alice), limit })).toThrow(
      expect.objectContaining({ status: 400, details: { field: 'limit' } }),
    );
  });
});
