import { ForbiddenError, type KeyKind } from '@plinth/shared';

/** Said when a rule refuses a public-key caller who sent no user token: often the whole reason. */
export const NO_USER_TOKEN_HINT = 'No user token was sent: sign in and send the access token in X-Db-User-Token.';

/**
 * A security rule's refusal (403). When the caller used a public key without a user token, the
 * message says so and `details.user_token` is `"missing"`, so a signed-out client can tell
 * "sign in first" from "this user may not".
 */
export function deniedByRules(caller: { keyKind: KeyKind; auth: unknown }, message: string): ForbiddenError {
  return caller.keyKind !== 'secret' && caller.auth === null
    ? new ForbiddenError(`${message} ${NO_USER_TOKEN_HINT}`, { user_token: 'missing' })
    : new ForbiddenError(message);
}
