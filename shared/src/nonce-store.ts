import Joi from 'joi';
import type { Redis } from 'ioredis';
import type { DependencyBreaker } from './dependency-breaker';
import { credentialExpiry, withinFallbackWindow, type VerifiedCredential } from './internal-auth';

/**
 * Where the nonces of accepted internal credentials are kept so that every replica of a service
 * refuses a credential another replica already accepted. Without one, each process remembers
 * its own (ReplayGuard).
 */
export interface NonceStore {
  /**
   * True the first time `nonce` is claimed anywhere; false when any replica claimed it before.
   * Rejects when the store cannot answer (the caller then decides: see requireInternal).
   */
  claim(nonce: string, expiresAtMs: number): Promise<boolean>;
}

/** Default key prefix of the nonces in Redis. */
export const DEFAULT_NONCE_PREFIX = 'plinth:internal:nonce:';

/** The services that check internal credentials (records, auth, mailer) read this variable. */
export interface NonceConfig {
  /** Key prefix of the nonces in Redis, so deployments that share one Redis keep theirs apart. */
  PLINTH_NONCE_PREFIX: string;
}

/** Spread into a service's Joi schema. */
export const nonceConfigKeys = {
  PLINTH_NONCE_PREFIX: Joi.string().min(1).max(200).default(DEFAULT_NONCE_PREFIX),
};

/** Refusal of a claim the store did not try (its breaker skips a Redis that just failed). */
export class NonceStoreUnavailableError extends Error {
  constructor() {
    super('The nonce store is unavailable.');
    this.name = 'NonceStoreUnavailableError';
  }
}

/**
 * Nonces in Redis (cluster mode): one `SET NX` with the credential's remaining lifetime. With a
 * `breaker`, a Redis that just failed is not asked again for a while: the claim rejects at once.
 */
export class RedisNonceStore implements NonceStore {
  private readonly now: () => number;
  private readonly breaker?: DependencyBreaker;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string = DEFAULT_NONCE_PREFIX,
    opts: { breaker?: DependencyBreaker; now?: () => number } = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.breaker = opts.breaker;
  }

  async claim(nonce: string, expiresAtMs: number): Promise<boolean> {
    if (this.breaker && !this.breaker.allow()) throw new NonceStoreUnavailableError();
    const ttl = Math.max(1000, expiresAtMs - this.now());
    try {
      const first = (await this.redis.set(`${this.prefix}${nonce}`, '1', 'PX', ttl, 'NX')) === 'OK';
      this.breaker?.succeeded();
      return first;
    } catch (err) {
      this.breaker?.failed();
      throw err;
    }
  }
}

/** What the shared store says of a credential: first use, a replay, or no answer within reach. */
export type NonceClaim = 'first' | 'replayed' | 'unavailable';

/**
 * Claims a verified credential's nonce in the shared store. While the store cannot answer, a
 * credential made within LOCAL_FALLBACK_WINDOW_SECONDS counts as `first` (the caller's own
 * ReplayGuard has already accepted it once on this replica); an older one is `unavailable`.
 */
export async function claimShared(store: NonceStore, credential: VerifiedCredential): Promise<NonceClaim> {
  try {
    return (await store.claim(credential.nonce, credentialExpiry(credential))) ? 'first' : 'replayed';
  } catch {
    return withinFallbackWindow(credential) ? 'first' : 'unavailable';
  }
}
