import type { AuthInfo } from '../domain/access-policy';
import type { ProjectTokenVerifiers } from './user-token';

/** The header record operations carry the user token in (contract §5). */
export const USER_TOKEN_HEADER = 'x-db-user-token';

export interface UserTokenInput {
  project: string;
  /** The raw `X-Db-User-Token` header value, if any. */
  userToken: string | string[] | undefined;
  verifiers: ProjectTokenVerifiers;
}

/**
 * The user rules see as `auth`. No header → null (anonymous). A header that is present is always
 * verified — an invalid, empty or expired token is a 401, never silently anonymous.
 * @throws UnauthorizedError (401) / UnavailableError (503) from the verifier.
 */
export async function authFromUserToken(input: UserTokenInput): Promise<AuthInfo | null> {
  const raw = Array.isArray(input.userToken) ? input.userToken[0] : input.userToken;
  return raw === undefined ? null : input.verifiers.verify(input.project, raw.trim());
}
