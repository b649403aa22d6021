import { createHash, timingSafeEqual } from 'node:crypto';
import { newId, newSecret, type ProjectId } from '@plinth/shared';
import type { ApiKeyKind, ApiKeyRecord } from './store/project-store';

/** A project key's shape: `pk_` or `sk_` then 32 random bytes (256 bits) in base64url. */
const KEY_PATTERN = /^(pk|sk)_[A-Za-z0-9_-]{20,100}$/;

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Compares two secrets in constant time (over their hashes, so lengths do not leak). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

export function looksLikeProjectKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** Extracts the credential of `Authorization: Bearer <credential>`, or null. */
export function bearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/** Makes a new key: the value (shown once) and the record to store (hash only). */
export function generateKey(project: ProjectId, kind: ApiKeyKind, now = new Date()): { value: string; record: ApiKeyRecord } {
  const value = newSecret(kind === 'public' ? 'pk_' : 'sk_', 32);
  return {
    value,
    record: {
      id: newId('key_', now.getTime()),
      project,
      kind,
      hash: hashKey(value),
      prefix: value.slice(0, 8),
      created_at: now.toISOString(),
    },
  };
}

/** What a key listing shows: never the hash. */
export function publicKeyView(k: ApiKeyRecord): { id: string; kind: ApiKeyKind; prefix: string; created_at: string } {
  return { id: k.id, kind: k.kind, prefix: k.prefix, created_at: k.created_at };
}
