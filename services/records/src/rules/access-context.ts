import type { KeyKind } from '@plinth/shared';
import type { AccessContext } from '../domain/access-policy';
import type { ProjectTokenVerifiers } from './user-token';

/** The header record operations carry the user token in (contract §5). */
export const USER_TOKEN_HEADER = 'x-db-user-token';

export interface AccessContextInput {
  project: string;
  keyKind: KeyKind;
  /** The raw `X-Db-User-Token` header value, if any. */
  userToken: string | string[] | undefined;
  verifiers: ProjectTokenVerifiers;
  now?: Date;
}

/**
 * Builds what rules see for one request. No header → `auth: null`. A header that is present is
 * always verified — an invalid or expired token is a 401, never silently anonymous.
 * @throws UnauthorizedError (401) / UnavailableError (503) from the verifier.
 */
export async function accessContextFor(input: AccessContextInput): Promise<AccessContext> {
  const now = input.now ?? new Date();
  const raw = Array.isArray(input.userToken) ? input.userToken[0] : input.userToken;
  const auth = raw === undefined ? null : await input.verifiers.verify(input.project, raw.trim());
  return { keyKind: input.keyKind, auth, now };
}
