/**
 * `x.contains(y)` and `x.startsWith(y)` in rules: parsed as the text comparisons of `where`,
 * refused where they cannot hold or cannot become a query, evaluated with the shared evaluator,
 * and a read rule's residual predicate carries them to the stores — where the records a store
 * returns are exactly those the fully evaluated rule allows.
 */
import { matchesPredicate, type Predicate } from '@plinth/shared';
import { RuleSyntaxError } from '../../src/rules/ast';
import { createRulesPolicy } from '../../src/rules';
import { parseRule } from '../../src/rules/parse';
import { evaluateRule } from '../../src/rules/evaluate';
import type { AuthInfo } from '../../src/domain/access-policy';
import { SqliteRecordStore } from '../../src/store/sqlite/sqlite-record-store';
import { asProjectId } from '@plinth/shared';
import { ctx, NOW, postsCollection, rec, user } from './fixtures';

const policy = createRulesPolicy();
const alice = user('usr_1', { email: 'Alice@Corp.example', claims: { prefix: 'Draft' } });

function residual(rule: string, auth: AuthInfo | null): Predicate {
  const collection = postsCollection({ read: rule });
  policy.validateRules(collection);
  return policy.readFilter(ctx(auth), collection);
}

function refusal(rules: { [k: string]: string }): { position: number; message: string } | null {
  try {
    policy.validateRules(postsCollection(rules));
    return null;
  } catch (err) {
    const details = (err as { details?: { position: number; reason: string } }).details;
    return details ? { position: details.position, message: details.reason } : { position: -1, message: String(err) };
  }
}

describe('text methods in rules', () => {
  it('parse as comparisons', () => {
    expect(parseRule('record.title.contains("x")')).toMatchObject({ type: 'compare', op: 'contains', left: { type: 'ref' }, right: { type: 'literal', value: 'x' } });
    expect(parseRule('data.title.startsWith(auth.claims.prefix)')).toMatchObject({ type: 'compare', op: 'starts-with' });
    expect(() => parseRule('record.title.endsWith("x")')).toThrow(RuleSyntaxError);
    expect(() => parseRule('record.title.contains("x", "y")')).toThrow(/one argument/);
    expect(() => parseRule('contains("x")')).toThrow(/function calls are not allowed/);
  });

  const RESIDUALS: Array<[string, AuthInfo | null, Predicate]> = [
    ['record.title.contains("urgent")', null, ['title', 'contains', 'urgent']],
    ['record.title.startsWith(auth.claims.prefix)', alice, ['title', 'starts-with', 'Draft']],
    ['record.title.startsWith(auth.claims.prefix)', user('usr_2'), false],
    ['record.title.startsWith(auth.claims.prefix)', null, false],
    ['!record.title.contains("secret") && record.owner == auth.uid', alice, { and: [{ not: ['title', 'contains', 'secret'] }, ['owner', '==', 'usr_1']] }],
    ['auth.email.contains("@corp.EXAMPLE") || record.published == true', alice, true],
    ['auth.email.contains("@other.example") || record.published == true', alice, ['published', '==', true]],
  ];
  it.each(RESIDUALS)('read rule %s for %s → residual', (rule, auth, expected) => {
    expect(residual(rule, auth)).toEqual(expected);
  });

  const REFUSED: Array<[string, { [k: string]: string }, RegExp]> = [
    ['on a number field', { read: 'record.score.contains(auth.uid)' }, /works on text/],
    ['on a number field, with a string', { read: 'record.score.contains("1")' }, /always false/],
    ['with a number', { read: 'record.title.contains(1)' }, /always false|compares text/],
    ['with a number on a claim', { read: 'auth.claims.x.contains(1)' }, /compares text/],
    ['with a list', { read: 'record.title.startsWith(["a"])' }, /compares text|cannot/],
    ['a record field as the argument of a read rule', { read: '"abc".contains(record.title)' }, /cannot become a query/],
  ];
  it.each(REFUSED)('refuses %s', (_label, rules, message) => {
    const r = refusal(rules);
    expect(r).not.toBeNull();
    expect(r?.message).toMatch(message);
  });

  it('write rules evaluate in full, ASCII case ignored', () => {
    const collection = postsCollection({ create: 'data.title.startsWith("[ok]") && "red,blue".contains(data.team)' });
    policy.validateRules(collection);
    const can = (title: string, team: string) => policy.canCreate(ctx(alice), collection, rec({ owner: 'usr_1', title, team }));
    expect(can('[OK] go', 'blue')).toBe(true);
    expect(can('ok go', 'blue')).toBe(false);
    expect(can('[ok] go', 'green')).toBe(false);
    expect(evaluateRule(parseRule('record.title.contains("É")'), { auth: null, now: NOW, record: rec({ title: 'é' }) })).toBe(false);
  });

  it('a store returns exactly the records the read rule allows', async () => {
    const store = SqliteRecordStore.open(':memory:');
    const P = asProjectId('rules-text');
    const rule = '!record.title.contains("%") && (record.title.startsWith(auth.claims.prefix) || record.owner == auth.uid)';
    const collection = postsCollection({ read: rule });
    await store.createCollection(P, collection);
    const records = ['Draft one', 'draft two', 'DRAFTS 100%', 'final', 'Dra_ft'].map((title, i) =>
      rec({ id: `rec_${i}`, owner: i === 3 ? 'usr_1' : 'usr_9', title }),
    );
    records.push(rec({ id: 'rec_9', owner: 'usr_9' }));
    for (const r of records) await store.insertRecord(P, collection, r);
    const predicate = residual(rule, alice);
    const found = await store.queryRecords(P, collection, { predicate, orderBy: 'id', direction: 'asc', limit: 100 });
    // The reference: the read rule evaluated in full with each record.
    const allowed = records.filter((r) => evaluateRule(parseRule(rule), { auth: alice, now: NOW, record: r })).map((r) => r.id);
    expect(found.map((r) => r.id)).toEqual(allowed);
    expect(allowed).toEqual(['rec_0', 'rec_1', 'rec_3']);
    expect(records.filter((r) => matchesPredicate(r, predicate)).map((r) => r.id)).toEqual(allowed);
    await store.close();
  });
});
