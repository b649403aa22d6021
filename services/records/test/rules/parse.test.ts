import { parseRule } from '../../src/rules/parse';
import { RuleSyntaxError } from '../../src/rules/ast';

describe('parseRule', () => {
  it('parses a rule once and serves the cached tree afterwards', () => {
    const source = 'record.owner == auth.uid && "x" in record.tags';
    expect(parseRule(source)).toBe(parseRule(source));
  });

  it('maps the rule language onto its tree, with positions', () => {
    expect(parseRule('!(record.score >= -2) || auth.claims.role in ["a"]')).toEqual({
      type: 'or',
      pos: 0,
      left: {
        type: 'not',
        pos: 0,
        arg: {
          type: 'compare',
          op: '>=',
          pos: 1,
          left: { type: 'ref', ref: { kind: 'record', field: 'score' }, pos: 2 },
          right: { type: 'literal', value: -2, pos: 18 },
        },
      },
      right: {
        type: 'compare',
        op: 'in',
        pos: 25,
        left: { type: 'ref', ref: { kind: 'claim', name: 'role' }, pos: 25 },
        right: { type: 'list', pos: 45, items: [{ type: 'literal', value: 'a', pos: 46 }] },
      },
    });
  });

  it('auth.token.<name> reads the same claim as auth.claims.<name>', () => {
    expect(parseRule('auth.token.role == "admin"')).toMatchObject({ left: { type: 'ref', ref: { kind: 'claim', name: 'role' } } });
    expect(parseRule('auth.claims.role == "admin"')).toMatchObject({ left: { type: 'ref', ref: { kind: 'claim', name: 'role' } } });
  });

  it('caches failures too, with their position', () => {
    expect(() => parseRule('record.a + 1')).toThrow(RuleSyntaxError);
    expect(() => parseRule('record.a + 1')).toThrow(expect.objectContaining({ position: 0 }));
  });
});
