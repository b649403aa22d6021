/** The security-rules engine (docs/rules.md, docs/rules.md). */
export { authFromUserToken, USER_TOKEN_HEADER, type UserTokenInput } from './access-context';
export { createRulesPolicy, type RulesPolicy, type RulesPolicyOptions } from './policy';
export { matchesPredicate, comparisonHolds } from './matches-predicate';
export { resolveSubscription, type ResolvedSubscription, type SubscriptionRequest } from './subscribe';
export {
  createProjectTokenVerifiers,
  createUserTokenVerifier,
  type ProjectTokenVerifiers,
  type ProjectTokenVerifiersOptions,
  type Jwk,
  type Jwks,
  type UserTokenVerifier,
  type UserTokenVerifierOptions,
} from './user-token';
export { andP, orP, notP } from './predicate-algebra';
export type { RuleKind } from './ast';
