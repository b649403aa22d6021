import { UnauthorizedError, type ProjectId } from '@plinth/shared';
import { createHash, timingSafeEqual } from 'node:crypto';
import { looksLikeProjectKey } from './keys';
import type { ApiKeyKind, ApiKeyRecord, ProjectStore } from './store/project-store';

/** A JWT (three base64url parts, a JSON header) where a project key belongs. */
const JWT = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

function looksLikeJwt(credential: string): boolean {
  return JWT.test(credential);
}

const JWT_AS_KEY =
  'Authorization carries the project key (Bearer pk_… or sk_…), and this is a user token. ' +
  'Send the project key in Authorization and the user token in X-Db-User-Token for record operations ' +
  'or X-Auth-User-Token for Auth endpoints.';

interface CacheEntry {
  key: ApiKeyRecord | null;
  expires: number;
}

export interface KeyAuthenticatorOptions {
  /** How long a lookup (hit or miss) is reused. Revocations through this gateway apply at once. */
  cacheTtlMs: number;
  maxEntries?: number;
  /**
   * Read before each lookup (ProjectStore.changeCounter): when it moved, another process changed
   * projects or keys, and the cache is dropped first.
   */
  changeCounter?: () => number;
}

/**
 * Authenticates project keys (docs/api-conventions.md "Credentials"): looks the key up by its SHA-256, compares the stored
 * hash in constant time, and checks it belongs to the project in the path. Lookups are cached
 * briefly, keyed by the presented credential, so a hit costs no hashing;
 * the operator API calls `forget` so a revoked key stops working immediately on this gateway;
 * other processes learn of it through `changeCounter` (workers sharing one SQLite file) or the
 * Redis channel of KeyCacheBus (cluster replicas); without either, within cacheTtlMs.
 */
export class KeyAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly maxEntries: number;
  private seenChange: number | null = null;
  private announce: (() => Promise<void>) | null = null;

  constructor(
    private readonly store: ProjectStore,
    private readonly opts: KeyAuthenticatorOptions,
  ) {
    this.maxEntries = opts.maxEntries ?? 10_000;
  }

  /** The stored key for this credential, or null. Never throws for bad input. */
  async lookup(credential: string): Promise<ApiKeyRecord | null> {
    if (!looksLikeProjectKey(credential)) return null;
    if (this.opts.changeCounter) {
      const change = this.opts.changeCounter();
      if (change !== this.seenChange) {
        this.cache.clear();
        this.seenChange = change;
      }
    }
    const now = Date.now();
    const hit = this.cache.get(credential);
    if (hit && hit.expires > now) return hit.key;
    const digest = createHash('sha256').update(credential).digest();
    const stored = await this.store.findKeyByHash(digest.toString('hex'));
    const key = stored && timingSafeEqual(Buffer.from(stored.hash, 'hex'), digest) ? stored : null;
    if (this.opts.cacheTtlMs > 0) {
      if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(credential, { key, expires: now + this.opts.cacheTtlMs });
    }
    return key;
  }

  /** The key kind, or throws 401 for a missing, unknown or other project's key. */
  async authenticate(project: ProjectId, credential: string | null): Promise<ApiKeyKind> {
    return (await this.authenticateKey(project, credential)).kind;
  }

  /** The stored key (its id and kind), or throws 401 for a missing, unknown or other project's key. */
  async authenticateKey(project: ProjectId, credential: string | null): Promise<ApiKeyRecord> {
    if (!credential) throw new UnauthorizedError('Missing API key: send Authorization: Bearer <key>.');
    if (looksLikeJwt(credential)) throw new UnauthorizedError(JWT_AS_KEY);
    const key = await this.lookup(credential);
    if (!key || key.project !== project) throw new UnauthorizedError('Invalid API key for this project.');
    return key;
  }

  /**
   * Drops cached lookups (all of them: revocations are rare), here and — through the function
   * given to `announceWith` — on the other replicas. Resolves once the announcement is sent.
   */
  async forget(): Promise<void> {
    this.cache.clear();
    await this.announce?.();
  }

  /** How `forget` tells other gateway replicas (cluster: KeyCacheBus.publish). */
  announceWith(fn: () => Promise<void>): void {
    this.announce = fn;
  }

  /** Drops cached lookups of this process only (what a replica does when told of a revocation elsewhere). */
  forgetLocal(): void {
    this.cache.clear();
  }
}
