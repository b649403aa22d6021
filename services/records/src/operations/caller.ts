import type { KeyKind, ProjectId } from '@plinth/shared';
import type { AccessContext, AuthInfo } from '../domain/access-policy';
import type { RuleLookups } from '../rules/rule-lookups';
import type { QueryClient } from '../store/record-store';

/** Who is calling: the project and key kind from the gateway, and the verified user token. */
export interface Caller {
  project: ProjectId;
  keyKind: KeyKind;
  auth: AuthInfo | null;
  /** Who the request's queries are for (fair share when they wait for capacity); anonymous when absent. */
  client?: QueryClient;
  /** The request's get()/exists() lookups, memoized (lookup-session.ts). */
  lookups?: RuleLookups;
}

export function accessContext(caller: Caller, now: Date): AccessContext {
  return caller.lookups ? { keyKind: caller.keyKind, auth: caller.auth, now, lookups: caller.lookups } : { keyKind: caller.keyKind, auth: caller.auth, now };
}

/** The secret key bypasses security rules (docs/api-conventions.md "Credentials"). */
export function bypassesRules(caller: Caller): boolean {
  return caller.keyKind === 'secret';
}

