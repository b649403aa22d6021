import type { KeyKind, ProjectId } from '@plinth/shared';
import type { AccessContext, AuthInfo } from '../domain/access-policy';

/** Who is calling: the project and key kind from the gateway, and the verified user token. */
export interface Caller {
  project: ProjectId;
  keyKind: KeyKind;
  auth: AuthInfo | null;
}

export function accessContext(caller: Caller, now: Date): AccessContext {
  return { keyKind: caller.keyKind, auth: caller.auth, now };
}

/** The secret key bypasses security rules (DESIGN.md §4). */
export function bypassesRules(caller: Caller): boolean {
  return caller.keyKind === 'secret';
}

