import jsep from 'jsep';
import { lookupField as lookupFieldOf, parseLookup } from './parse-lookup';
import { RuleSyntaxError, type AuthMember, type Ref, type RuleComparisonOp, type RuleExpr } from './ast';

/**
 * Rule strings → RuleExpr, through jsep (docs/rules.md). jsep does the parsing; this file only
 * records where each token starts, then maps jsep's tree onto the small rule language, resolving
 * every identifier through an allowlist. Anything outside the language is a RuleSyntaxError
 * carrying the character position.
 */

/** Longest rule accepted, in characters. */
export const MAX_RULE_LENGTH = 4096;
const CACHE_LIMIT = 2000;

// `in` is a word operator with the precedence of `<` (jsep's table is process-wide; Plinth
// uses jsep only here).
jsep.addBinaryOp('in', 7);

type Node = jsep.Expression & { start?: number };

/** The parts of jsep's parser class this file extends (jsep's typings only describe the function). */
interface JsepParser {
  index: number;
  gobbleSpaces(): void;
  gobbleToken(): Node | false | undefined;
  gobbleIdentifier(): Node;
  parse(): Node;
}
type JsepParserClass = new (expr: string) => JsepParser;

const JsepBase = (jsep as unknown as { Jsep: JsepParserClass }).Jsep;

/** jsep's parser, stamping `start` (the character offset) on every token and property name. */
class LocatingParser extends JsepBase {
  override gobbleToken(): Node | false | undefined {
    this.gobbleSpaces();
    const start = this.index;
    const node = super.gobbleToken();
    if (node && node.start === undefined) node.start = start;
    return node;
  }

  override gobbleIdentifier(): Node {
    const start = this.index;
    const node = super.gobbleIdentifier();
    node.start = start;
    return node;
  }
}

const COMPARISONS: ReadonlySet<string> = new Set<RuleComparisonOp>(['==', '!=', '<', '<=', '>', '>=', 'in']);
const AUTH_MEMBERS: ReadonlySet<string> = new Set<AuthMember>(['uid', 'email', 'email_verified']);

const cache = new Map<string, RuleExpr | RuleSyntaxError>();

/**
 * Parses a rule string. Results (and failures) are cached by the exact string, so a rule is
 * parsed once per process however many requests use it.
 * @throws RuleSyntaxError with the position of the offending token.
 */
export function parseRule(source: string): RuleExpr {
  let result = cache.get(source);
  if (result === undefined) {
    result = compile(source);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    cache.set(source, result);
  }
  if (result instanceof RuleSyntaxError) throw result;
  return result;
}

function compile(source: string): RuleExpr | RuleSyntaxError {
  if (source.length > MAX_RULE_LENGTH) {
    return new RuleSyntaxError(`rule is longer than ${MAX_RULE_LENGTH} characters`, MAX_RULE_LENGTH);
  }
  if (source.trim() === '') return new RuleSyntaxError('rule is empty', 0);
  let tree: Node;
  try {
    tree = new LocatingParser(source).parse();
  } catch (err) {
    const { description, index, message } = err as { description?: string; index?: number; message: string };
    return new RuleSyntaxError(description ?? message, index ?? 0);
  }
  try {
    return toExpr(tree);
  } catch (err) {
    if (err instanceof RuleSyntaxError) return err;
    throw err;
  }
}

/** Where a jsep node starts: its own stamp, else that of its leftmost child. */
function positionOf(node: Node | null | undefined): number {
  if (!node) return 0;
  if (typeof node.start === 'number') return node.start;
  for (const key of ['left', 'object', 'callee', 'test', 'argument']) {
    const child = node[key];
    if (child && typeof child === 'object' && 'type' in child) return positionOf(child as Node);
  }
  const body = (node.body ?? node.expressions) as Node[] | undefined;
  return Array.isArray(body) && body.length > 0 ? positionOf(body[0]) : 0;
}

function fail(message: string, node: Node | null | undefined): never {
  throw new RuleSyntaxError(message, positionOf(node));
}

function toExpr(node: Node): RuleExpr {
  const pos = positionOf(node);
  switch (node.type) {
    case 'Literal':
      return literal(node as jsep.Literal & Node, pos);
    case 'ArrayExpression': {
      const elements = (node as jsep.ArrayExpression).elements;
      return {
        type: 'list',
        pos,
        items: elements.map((el) => (el ? toExpr(el as Node) : fail('empty list element', node))),
      };
    }
    case 'Identifier':
      return { type: 'ref', ref: resolve(node), pos };
    case 'MemberExpression': {
      const member = node as jsep.MemberExpression & Node;
      if ((member.object as Node).type === 'CallExpression') return lookupField(member, pos);
      return { type: 'ref', ref: resolve(node), pos };
    }
    case 'BinaryExpression':
      return binary(node as jsep.BinaryExpression & Node, pos);
    case 'UnaryExpression':
      return unary(node as jsep.UnaryExpression & Node, pos);
    case 'CallExpression':
      // x.contains(y) / x.startsWith(y) are method calls; get(…) and exists(…) are plain calls.
      if ((node as jsep.CallExpression).callee.type === 'MemberExpression') return textMethod(node as jsep.CallExpression & Node, pos);
      return parseLookup(node as jsep.CallExpression & Node, pos, toExpr, fail);
    case 'ThisExpression':
      return fail('"this" is not allowed', node);
    case 'ConditionalExpression':
      return fail('the conditional operator ?: is not allowed', node);
    case 'Compound':
    case 'SequenceExpression': {
      const parts = (node.body ?? node.expressions) as Node[];
      return fail('a rule is one expression', parts.length > 1 ? parts[1] : node);
    }
    default:
      return fail(`${node.type} is not allowed`, node);
  }
}

/** `get(…).field`: one field of the looked-up record. */
function lookupField(member: jsep.MemberExpression & Node, pos: number): RuleExpr {
  return lookupFieldOf(member, parseLookup(member.object as jsep.CallExpression & Node, pos, toExpr, fail), pos, fail);
}

function literal(node: jsep.Literal & Node, pos: number): RuleExpr {
  const { value } = node;
  if (value instanceof RegExp) return fail('regular expressions are not allowed', node);
  if (typeof value === 'number' && !Number.isFinite(value)) return fail('number out of range', node);
  return { type: 'literal', value, pos };
}

function binary(node: jsep.BinaryExpression & Node, pos: number): RuleExpr {
  const op = node.operator;
  if (op === '&&' || op === '||') {
    return { type: op === '&&' ? 'and' : 'or', left: toExpr(node.left), right: toExpr(node.right), pos };
  }
  if (COMPARISONS.has(op)) {
    return { type: 'compare', op: op as RuleComparisonOp, left: toExpr(node.left), right: toExpr(node.right), pos };
  }
  if (op === '===' || op === '!==') return fail(`operator ${op} is not allowed; use ${op.slice(0, 2)}`, node);
  return fail(`operator ${op} is not allowed`, node);
}

/** The only calls: `x.contains(y)` and `x.startsWith(y)`, comparisons of text. */
const TEXT_METHODS: Readonly<Record<string, RuleComparisonOp>> = { contains: 'contains', startsWith: 'starts-with' };

function textMethod(node: jsep.CallExpression & Node, pos: number): RuleExpr {
  const callee = node.callee as Node;
  const member = callee as jsep.MemberExpression & Node;
  const name = callee.type === 'MemberExpression' && !member.computed && (member.property as Node).type === 'Identifier' ? String((member.property as Node).name) : undefined;
  const op = name !== undefined && Object.hasOwn(TEXT_METHODS, name) ? TEXT_METHODS[name] : undefined;
  if (op === undefined) return fail('function calls are not allowed (only x.contains(y) and x.startsWith(y))', node);
  if (member.optional) return fail('optional chaining ?. is not allowed', member.property as Node);
  if (node.arguments.length !== 1) return fail(`${name} takes one argument`, node);
  return { type: 'compare', op, left: toExpr(member.object as Node), right: toExpr(node.arguments[0] as Node), pos };
}

function unary(node: jsep.UnaryExpression & Node, pos: number): RuleExpr {
  const arg = node.argument as Node;
  if (node.operator === '!') return { type: 'not', arg: toExpr(arg), pos };
  if (node.operator === '-' && arg.type === 'Literal' && typeof arg.value === 'number') {
    return { type: 'literal', value: -arg.value, pos };
  }
  return fail(`operator ${node.operator} is not allowed here`, node);
}

/** Resolves `a.b.c` through the allowlist of names a rule may use. */
function resolve(node: Node): Ref {
  const path: Node[] = [];
  let cur: Node = node;
  while (cur.type === 'MemberExpression') {
    const member = cur as jsep.MemberExpression & Node;
    if (member.computed) return fail('computed member access [...] is not allowed; use a.b', member.property as Node);
    if (member.optional) return fail('optional chaining ?. is not allowed', member.property as Node);
    path.unshift(member.property as Node);
    cur = member.object as Node;
  }
  if (cur.type === 'ThisExpression') return fail('"this" is not allowed', node);
  if (cur.type !== 'Identifier') return fail('member access is only allowed on auth, request, record and data', cur);
  const names = path.map((p) => (p.type === 'Identifier' ? String(p.name) : fail('expected a name', p)));
  const root = String(cur.name);
  const [first, second] = names;
  switch (root) {
    case 'auth':
      if (first === undefined) return { kind: 'auth' };
      // auth.token.<name> (as in other BaaS rule languages) and auth.claims.<name> are one thing:
      // a custom claim of the user token (minted claims, or claims an admin set on an Auth user).
      if (first === 'claims' || first === 'token') {
        if (second === undefined) return fail(`use auth.${first}.<name>`, path[0]);
        if (names.length > 2) return fail('nested claim access is not allowed', path[2]);
        return { kind: 'claim', name: second };
      }
      if (!AUTH_MEMBERS.has(first)) return fail(`unknown name auth.${first}`, path[0]);
      if (names.length > 1) return fail(`auth.${first} has no members`, path[1]);
      return { kind: 'auth-member', name: first as AuthMember };
    case 'request':
      if (first !== 'time') return fail(first === undefined ? 'use request.time' : `unknown name request.${first}`, path[0] ?? cur);
      if (names.length > 1) return fail('request.time has no members', path[1]);
      return { kind: 'request-time' };
    case 'record':
    case 'data':
      if (first === undefined) return fail(`use ${root}.<field>`, cur);
      // One level more names a file field's metadata (data.cover.size); validate.ts checks it is one.
      if (names.length > 2) return fail('nested field access is not allowed', path[2]);
      if (second !== undefined) return root === 'record' ? { kind: 'record', field: first, member: second } : { kind: 'data', field: first, member: second };
      return root === 'record' ? { kind: 'record', field: first } : { kind: 'data', field: first };
    default:
      return fail(`unknown name ${root}`, cur);
  }
}
