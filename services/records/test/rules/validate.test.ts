import { InvalidRequestError, type CollectionRules } from '@plinth/shared';
import { createRulesPolicy } from '../../src/rules';
import { postsCollection } from './fixtures';

const policy = createRulesPolicy();

function validationError(rules: CollectionRules): InvalidRequestError {
  try {
    policy.validateRules(postsCollection(rules));
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error(`rules were accepted: ${JSON.stringify(rules)}`);
}

describe('rules refused by validateRules (400 naming the rule and the position)', () => {
  const table: Array<[rule: keyof CollectionRules, source: string, position: number, reason: RegExp]> = [
    // Not a store predicate
    ['read', 'record.owner == record.title', 0, /cannot compare a record field with another record field/],
    ['read', 'auth.uid == record.owner && record.owner == record.title', 28, /cannot compare a record field/],
    ['read', 'record.owner in [record.title]', 17, /cannot put record fields inside a list/],
    ['read', 'record.tags == ["a"]', 15, /compare a record field with == only to a single value/],
    ['read', '["a"] != record.tags', 0, /compare a record field with != only to a single value/],
    ['read', '["a"] in record.tags', 0, /look for a string, number or boolean in a record list/],
    ['read', 'record.published && null in record.tags', 20, /look for a string, number or boolean/],
    ['read', 'record.score > 1 + 1', 15, /operator \+ is not allowed/],
    ['read', 'record.score * 2 > 1', 0, /operator \* is not allowed/],
    ['read', '-record.score < 1', 0, /operator - is not allowed/],
    // Names outside the allowlist
    ['read', 'owner == auth.uid', 0, /unknown name owner/],
    ['read', 'auth.uid == user.id', 12, /unknown name user/],
    ['read', 'auth.token == "x"', 5, /use auth\.token\.<name>/],
    ['read', 'auth.claims == "x"', 5, /use auth\.claims\.<name>/],
    ['read', 'auth.claims.org.id == "x"', 16, /nested claim access/],
    ['read', 'request.method == "GET"', 8, /unknown name request\.method/],
    ['read', 'record == null', 0, /use record\.<field>/],
    ['read', 'record.meta.color == "red"', 12, /nested field access/],
    ['read', 'record.nope == 1', 0, /unknown field nope/],
    ['read', 'record.owner == "a" || record.nope == 1', 23, /unknown field nope/],
    ['update', 'data.nope == record.owner', 0, /unknown field nope/],
    // record / data by operation
    ['read', 'data.owner == auth.uid', 0, /data is only available in create and update rules/],
    ['delete', 'record.owner == auth.uid && data.owner == auth.uid', 28, /data is only available/],
    ['create', 'record.owner == auth.uid', 0, /record is not available in a create rule/],
    ['create', 'data.owner == auth.uid && record.published', 26, /record is not available in a create rule/],
    // JavaScript that is not in the language
    ['read', 'size(record.tags) > 1', 0, /unknown function size; a rule may call get\(collection, id\) and exists/],
    ['read', 'record.owner.toLowerCase() == "a"', 0, /function calls are not allowed/],
    ['read', 'this.owner == auth.uid', 0, /"this" is not allowed/],
    ['read', 'record["owner"] == auth.uid', 7, /computed member access/],
    ['read', 'record?.owner == auth.uid', 8, /optional chaining/],
    ['read', 'record.published ? true : false', 0, /conditional operator/],
    ['read', 'record.owner === auth.uid', 0, /operator === is not allowed; use ==/],
    ['read', 'record.owner = auth.uid', 13, /Unexpected "="/],
    ['read', 'record.owner == "a"; true', 21, /a rule is one expression/],
    ['read', 'record.owner ==', 15, /Expected expression after ==/],
    ['read', 'record.owner == "a', 18, /Unclosed quote/],
    ['read', '(record.owner == "a"', 20, /Unclosed \(/],
    ['read', '   ', 0, /rule is empty/],
    // Conditions and operand types
    ['read', '"admin"', 0, /expected a condition, found "admin"/],
    ['read', 'auth.uid', 0, /auth\.uid is not a condition/],
    ['read', 'auth', 0, /auth is not a condition; use auth != null/],
    ['read', 'record.title && true', 0, /record\.title is not a condition/],
    ['read', 'true && !record.score', 9, /record\.score is not a condition/],
    ['read', '[true]', 0, /found a list/],
    ['read', 'auth == "usr_1"', 0, /auth can only be compared with null/],
    ['read', 'auth.uid in auth', 12, /auth can only be compared with null/],
    ['read', 'record.meta < true', 14, /< compares numbers, strings or timestamps, not true/],
    ['read', 'record.meta >= [1]', 15, />= cannot compare lists/],
    ['read', '"x" in record.title', 7, /the right side of in must be a list/],
    ['read', 'record.team in "red"', 15, /the right side of in must be a list/],
    ['read', 'record.score == "5"', 16, /record\.score holds number values; comparing it with "5" is always false/],
    ['read', '"5" < record.score', 0, /record\.score holds number values/],
    ['read', 'record.published != 1', 20, /record\.published holds boolean values/],
    ['read', 'record.team in ["red", 3]', 23, /record\.team holds text values; comparing it with 3/],
    ['create', 'data.tags == "a"', 13, /data\.tags holds list values/],
    ['update', 'record.publish_at < 5', 20, /record\.publish_at holds timestamp values/],
    ['read', '(record.owner == "a") == true', 0, /a comparison operand must be a value/],
  ];

  it.each(table)('%s: %s → position %d', (rule, source, position, reason) => {
    const err = validationError({ [rule]: source });
    expect(err.status).toBe(400);
    expect(err.details).toMatchObject({ field: `rules.${rule}`, rule, position });
    expect(String(err.details?.reason)).toMatch(reason);
    expect(err.message).toContain(`rules.${rule}`);
    expect(err.message).toContain(`position ${position}`);
  });

  it('refuses a rule longer than 4096 characters', () => {
    const long = Array.from({ length: 400 }, () => 'record.score > 1').join(' || ');
    expect(validationError({ read: long }).details).toMatchObject({ rule: 'read', position: 4096 });
  });

  it('names the rule that is wrong when others are fine', () => {
    const err = validationError({ read: 'true', create: 'data.owner == auth.uid', update: 'data.x == 1' });
    expect(err.details).toMatchObject({ field: 'rules.update', rule: 'update', position: 0 });
  });

  it('refuses an unknown operation and a rule that is not a string', () => {
    expect(validationError({ list: 'true' } as CollectionRules).details).toEqual({ field: 'rules.list' });
    expect(validationError({ read: 42 } as unknown as CollectionRules).details).toMatchObject({ field: 'rules.read' });
  });
});

describe('rules accepted by validateRules', () => {
  const accepted: Array<[rule: keyof CollectionRules, source: string]> = [
    ['read', 'true'],
    ['read', 'auth != null && (record.owner == auth.uid || record.published)'],
    ['read', 'record.meta'],
    ['read', 'auth.claims.admin || "red" in record.tags'],
    ['read', 'record.publish_at <= request.time && record.team in auth.claims.teams'],
    ['read', "record.title == 'single quoted'"],
    ['read', 'record.score == null && record.meta == "anything" && record.meta < 3'],
    ['read', 'record.team in ["red", null]'],
    ['create', 'data.tags == ["a", "b"] && data.score == 2.5'],
    ['create', 'data.owner == auth.uid && data.score >= 0 && data.score <= 100'],
    ['update', 'record.owner == auth.uid && data.owner == record.owner'],
    ['update', 'record.version < data.version && data.tags == record.tags'],
    ['delete', 'record.owner == auth.uid || auth.claims.role == "admin"'],
    ['create', 'data.team in [auth.claims.team, "public"]'],
  ];

  it.each(accepted)('%s: %s', (rule, source) => {
    expect(() => policy.validateRules(postsCollection({ [rule]: source }))).not.toThrow();
  });

  it('accepts a collection without rules (everything denied to public keys)', () => {
    expect(() => policy.validateRules(postsCollection({}))).not.toThrow();
  });
});
