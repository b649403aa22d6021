import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Collection, CollectionRules, Predicate, RecordDoc } from '@plinth/shared';
import { createRulesPolicy } from '../../src/rules';
import type { AuthInfo } from '../../src/domain/access-policy';
import { OWNER_ONLY, PUBLIC_READ_OWNER_WRITE, ROLE_CLAIMS, VERIFIED_EMAIL_ONLY, type DocExample } from './doc-examples';
import { ctx, rec, user } from './fixtures';

/** The worked examples of docs/rules.md. Each rule string here must appear verbatim in the doc. */
const DOC = readFileSync(join(__dirname, '../../../../docs/rules.md'), 'utf8');
const policy = createRulesPolicy();

const alice = user('usr_alice');
const bob = user('usr_bob', { email_verified: false });
const admin = user('usr_admin', { claims: { role: 'admin' } });

function collection({ name, fields, rules }: DocExample): Collection {
  const c: Collection = { name, fields, rules, revision: 1, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };
  policy.validateRules(c);
  return c;
}

const readAs = (c: Collection, auth: AuthInfo | null): Predicate => policy.readFilter(ctx(auth), c);
const create = (c: Collection, auth: AuthInfo | null, data: RecordDoc) => policy.canCreate(ctx(auth), c, data);
const update = (c: Collection, auth: AuthInfo | null, before: RecordDoc, after: RecordDoc) => policy.canUpdate(ctx(auth), c, before, after);
const remove = (c: Collection, auth: AuthInfo | null, record: RecordDoc) => policy.canDelete(ctx(auth), c, record);

function expectDocumented(rules: CollectionRules): void {
  for (const source of Object.values(rules)) expect(DOC).toContain(JSON.stringify(source));
}

describe('docs/rules.md: owner-only records', () => {
  const { rules } = OWNER_ONLY;
  const notes = collection(OWNER_ONLY);
  const note = rec({ owner: 'usr_alice', body: 'hi' });

  it('is the rule set the doc shows', () => expectDocumented(rules));

  it('reads only your own notes; anonymous reads are forbidden', () => {
    expect(readAs(notes, alice)).toEqual(['owner', '==', 'usr_alice']);
    expect(readAs(notes, null)).toBe(false);
  });

  it('creates, updates and deletes only as the owner', () => {
    expect(create(notes, alice, rec({ owner: 'usr_alice' }))).toBe(true);
    expect(create(notes, alice, rec({ owner: 'usr_bob' }))).toBe(false);
    expect(create(notes, null, rec({ owner: 'usr_alice' }))).toBe(false);
    expect(update(notes, alice, note, { ...note, body: 'edited' })).toBe(true);
    expect(update(notes, alice, note, { ...note, owner: 'usr_bob' })).toBe(false);
    expect(update(notes, bob, note, { ...note, body: 'mine now' })).toBe(false);
    expect(remove(notes, alice, note)).toBe(true);
    expect(remove(notes, bob, note)).toBe(false);
  });
});

describe('docs/rules.md: public read, owner write', () => {
  const { rules } = PUBLIC_READ_OWNER_WRITE;
  const posts = collection(PUBLIC_READ_OWNER_WRITE);
  const draft = rec({ author: 'usr_alice', published: false });

  it('is the rule set the doc shows', () => expectDocumented(rules));

  it('shows published posts to everyone and drafts to their author', () => {
    expect(readAs(posts, null)).toEqual(['published', '==', true]);
    expect(readAs(posts, alice)).toEqual({ or: [['published', '==', true], ['author', '==', 'usr_alice']] });
  });

  it('lets only the author write', () => {
    expect(create(posts, alice, rec({ author: 'usr_alice' }))).toBe(true);
    expect(create(posts, null, rec({ author: 'usr_alice' }))).toBe(false);
    expect(update(posts, alice, draft, { ...draft, published: true })).toBe(true);
    expect(update(posts, bob, draft, { ...draft, published: true })).toBe(false);
    expect(remove(posts, bob, draft)).toBe(false);
  });
});

describe('docs/rules.md: verified e-mail only', () => {
  const { rules } = VERIFIED_EMAIL_ONLY;
  const reviews = collection(VERIFIED_EMAIL_ONLY);

  it('is the rule set the doc shows', () => expectDocumented(rules));

  it('reads everything when verified, nothing otherwise', () => {
    expect(readAs(reviews, alice)).toBe(true);
    expect(readAs(reviews, bob)).toBe(false);
    expect(readAs(reviews, null)).toBe(false);
  });

  it('creates only when verified; no update or delete rule means nobody (but the secret key)', () => {
    expect(create(reviews, alice, rec({ owner: 'usr_alice', stars: 5 }))).toBe(true);
    expect(create(reviews, bob, rec({ owner: 'usr_bob', stars: 1 }))).toBe(false);
    const review = rec({ owner: 'usr_alice', stars: 5 });
    expect(update(reviews, alice, review, { ...review, stars: 4 })).toBe(false);
    expect(remove(reviews, alice, review)).toBe(false);
    expect(policy.canDelete(ctx(null, 'secret'), reviews, review)).toBe(true);
  });
});

describe('docs/rules.md: role claims', () => {
  const { rules } = ROLE_CLAIMS;
  const tickets = collection(ROLE_CLAIMS);
  const ticket = rec({ owner: 'usr_alice', status: 'open' });

  it('is the rule set the doc shows', () => expectDocumented(rules));

  it('lets admins read everything and others their own tickets', () => {
    expect(readAs(tickets, admin)).toBe(true);
    expect(readAs(tickets, alice)).toEqual(['owner', '==', 'usr_alice']);
    expect(readAs(tickets, null)).toBe(false);
  });

  it('lets only admins delete', () => {
    expect(remove(tickets, admin, ticket)).toBe(true);
    expect(remove(tickets, alice, ticket)).toBe(false);
    expect(create(tickets, alice, rec({ owner: 'usr_alice' }))).toBe(true);
  });
});
