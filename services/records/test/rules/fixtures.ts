import type { Collection, CollectionRules, RecordDoc } from '@plinth/shared';
import type { AccessContext, AuthInfo } from '../../src/domain/access-policy';

/** A collection with one field of each type the rules tests need. */
export function postsCollection(rules: CollectionRules = {}): Collection {
  return {
    name: 'posts',
    fields: {
      owner: { type: 'text', required: true },
      title: { type: 'text' },
      team: { type: 'text' },
      published: { type: 'boolean' },
      score: { type: 'number' },
      tags: { type: 'list' },
      meta: { type: 'json' },
      publish_at: { type: 'timestamp' },
    },
    rules,
    revision: 3,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  };
}

export const NOW = new Date('2026-06-01T12:00:00.000Z');

export function user(uid: string, extra: Partial<AuthInfo> = {}): AuthInfo {
  return { uid, email: `${uid}@example.com`, email_verified: true, claims: {}, exp: 1_900_000_000, ...extra };
}

export function ctx(auth: AuthInfo | null, keyKind: AccessContext['keyKind'] = 'public'): AccessContext {
  return { keyKind, auth, now: NOW };
}

export function rec(fields: Partial<RecordDoc> & { [field: string]: RecordDoc[string] } = {}): RecordDoc {
  return {
    id: 'rec_1',
    version: 1,
    created_at: '2026-05-01T00:00:00.000Z',
    updated_at: '2026-05-01T00:00:00.000Z',
    ...fields,
  } as RecordDoc;
}
