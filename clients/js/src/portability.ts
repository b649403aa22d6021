/**
 * Moving a project's Auth between deployments through `@plinth/client/admin` (secret key;
 * docs/operators.md "Moving a project"): the Auth settings with the providers' client secrets,
 * and the users as stored — password hashes, identities, second factors with their secrets —
 * exported a page at a time and imported in batches. What these answer is secret: keep it so.
 */
import type { AuthSettings } from '@plinth/protocol';
import type { CallOptions, Transport } from './transport';

/** A user as stored, with what signs them in (hash, identities, second factor): opaque to the SDK, imported back as is. */
export type PortableUser = { id: string; [field: string]: unknown };

/** Users per page or import call (the server takes at most 500). */
const PAGE = 500;

export interface PortabilityAdmin {
  /** The Auth settings with the providers' client secrets (which `authSettings.get` never answers). */
  settings(opts?: CallOptions): Promise<AuthSettings & { [k: string]: unknown }>;
  /** One page of the users in creation order (offset paging: export a quiet project). */
  users(page?: { offset?: number; limit?: number }, opts?: CallOptions): Promise<{ users: PortableUser[]; total: number }>;
  /** Every user, page by page. */
  exportUsers(opts?: CallOptions): AsyncIterable<PortableUser>;
  /** Stores exported users as they were (up to 500 a call); ids already stored are counted as `existing`. */
  importUsers(users: readonly PortableUser[], opts?: CallOptions): Promise<{ imported: number; existing: number }>;
}

export function portabilityAdmin(t: Transport): PortabilityAdmin {
  const users = (q: { offset?: number; limit?: number } = {}, o: CallOptions = {}) =>
    t.request<{ users: PortableUser[]; total: number }>({ method: 'GET', path: '/auth/portability/users', query: q, signal: o.signal });
  return {
    settings: async (o = {}) => (await t.request<{ settings: AuthSettings & { [k: string]: unknown } }>({ method: 'GET', path: '/auth/portability/settings', signal: o.signal })).settings,
    users,
    async *exportUsers(o = {}) {
      for (let offset = 0; ; offset += PAGE) {
        const page = await users({ offset, limit: PAGE }, o);
        yield* page.users;
        if (page.users.length < PAGE) return;
      }
    },
    importUsers: (list, o = {}) => t.request({ method: 'POST', path: '/auth/portability/users', body: { users: list }, signal: o.signal }),
  };
}
