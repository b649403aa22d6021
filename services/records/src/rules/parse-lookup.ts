import type jsep from 'jsep';
import { COLLECTION_NAME } from '../domain/collection-definition';
import type { LookupFn, RuleExpr } from './ast';

/**
 * The two functions a rule may call, `get(collection, id)` and `exists(collection, id)`
 * (docs/rules.md "Lookups"), and `get(…).field`. The collection is a string literal (so a rule
 * names what it reads when it is saved); the id is any value expression.
 */
type Node = jsep.Expression & { start?: number };
type Fail = (message: string, node: Node | null | undefined) => never;

const FUNCTIONS: ReadonlySet<string> = new Set<LookupFn>(['get', 'exists']);

export function parseLookup(call: jsep.CallExpression & Node, pos: number, toExpr: (n: Node) => RuleExpr, fail: Fail): Extract<RuleExpr, { type: 'lookup' }> {
  const callee = call.callee as Node;
  const name = callee.type === 'Identifier' ? String(callee.name) : '';
  if (!FUNCTIONS.has(name)) {
    const allowed = 'a rule may call get(collection, id) and exists(collection, id); other function calls are not allowed (methods: x.contains(y), x.startsWith(y))';
    return fail(name ? `unknown function ${name}; ${allowed}` : 'function calls are not allowed', callee);
  }
  const args = call.arguments as Node[];
  if (args.length !== 2) return fail(`${name} takes two arguments: ${name}('collection', id)`, call);
  const [collectionArg, idArg] = args as [Node, Node];
  if (collectionArg.type !== 'Literal' || typeof collectionArg.value !== 'string') {
    return fail(`the first argument of ${name} must be a collection name in quotes, e.g. ${name}('rooms', data.room)`, collectionArg);
  }
  const collection = collectionArg.value;
  if (!COLLECTION_NAME.test(collection)) return fail(`"${collection}" is not a collection name`, collectionArg);
  return { type: 'lookup', fn: name as LookupFn, collection, id: toExpr(idArg), pos };
}

/** `get(…).field`; exists(…) has no fields, and fields do not nest. */
export function lookupField(member: jsep.MemberExpression & Node, call: Extract<RuleExpr, { type: 'lookup' }>, pos: number, fail: Fail): RuleExpr {
  const property = member.property as Node;
  if (member.computed) return fail('computed member access [...] is not allowed; use get(…).field', property);
  if (member.optional) return fail('optional chaining ?. is not allowed', property);
  if (call.fn !== 'get') return fail('exists(…) is true or false and has no fields', property);
  if (property.type !== 'Identifier') return fail('expected a field name', property);
  return { ...call, field: String(property.name), pos };
}
