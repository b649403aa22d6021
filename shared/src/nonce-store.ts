import Joi from 'joi';
import type { Redis } from 'ioredis';

/**
 * Where the nonces of accepted internal credentials are kept so that every replica of a service
 * refuses a credential another replica already accepted. Without one, each process remembers
 * its own (ReplayGuard).
 */
export interface NonceStore {
  /** True the first time `nonce` is claimed anywhere; false when any replica claimed it before. */
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

/** Nonces in Redis (cluster mode): one `SET NX` with the credential's remaining lifetime. */
export class RedisNonceStore implements NonceStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string = DEFAULT_NONCE_PREFIX,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(nonce: string, expiresAtMs: number): Promise<boolean> {
    const ttl = Math.max(1000, expiresAtMs - this.now());
    return (await this.redis.set(`${this.prefix}${nonce}`, '1', 'PX', ttl, 'NX')) === 'OK';
  }
}
