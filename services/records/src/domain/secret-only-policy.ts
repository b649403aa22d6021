import type { AccessPolicy } from './access-policy';

/**
 * The policy until security rules are enforced: the secret key may do everything (the routes
 * bypass the policy for it), a public key may list collections and nothing else — every record
 * operation with a public key is refused with 403. Rules are stored but not evaluated.
 */
export const secretOnlyPolicy: AccessPolicy = {
  validateRules: () => {},
  readFilter: (ctx) => ctx.keyKind === 'secret',
  canCreate: (ctx) => ctx.keyKind === 'secret',
  canUpdate: (ctx) => ctx.keyKind === 'secret',
  canDelete: (ctx) => ctx.keyKind === 'secret',
};
