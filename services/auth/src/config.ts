import Joi from 'joi';
import {
  commonConfig,
  mailQueueConfigKeys,
  webhookQueueConfigKeys,
  nonceConfigKeys,
  revocationSyncConfigKeys,
  type MailQueueConfig,
  type WebhookQueueConfig,
  type NonceConfig,
  type RevocationSyncConfig,
} from '@plinth/shared';

/** Environment of the auth service, validated at start-up (docs/auth.md: Configuration). */
export interface AuthConfig extends MailQueueConfig, WebhookQueueConfig, NonceConfig, RevocationSyncConfig {
  PORT: number;
  PLINTH_INTERNAL_SECRET: string;
  PLINTH_DATA_DIR: string;
  LOG_LEVEL: string;
  /** Redis sessions, revocations, rate limits and mail queue (BullMQ) when set; embedded otherwise. */
  REDIS_URL?: string;
  /** MongoDB users when set; SQLite `${PLINTH_DATA_DIR}/auth.db` otherwise. */
  MONGO_URL?: string;
  /** maxCommitTimeMS of every MongoDB transaction: a commit not acknowledged in time answers 503. */
  PLINTH_MONGO_COMMIT_TIMEOUT_MS: number;
  /** bcrypt cost factor (default 10, minimum 4). */
  PLINTH_BCRYPT_COST: number;
  /** libuv's thread pool, where bcrypt runs (Node's own variable; default 4). */
  UV_THREADPOOL_SIZE: number;
  /** Password hashes running at once (default: UV_THREADPOOL_SIZE). */
  PLINTH_HASH_CONCURRENCY?: number;
  /** Password hashes waiting for a thread at once, per process (default 64; one project: 3/4). */
  PLINTH_HASH_MAX_QUEUED: number;
  /** Longest wait for a hashing thread (ms, default 1000); past it, 503 `overloaded`. */
  PLINTH_HASH_MAX_WAIT_MS: number;
  /** Requests per IP per endpoint per 5 minutes on signin, signup, otp, forgot (refresh: 5×). */
  PLINTH_RATE_LIMIT_IP: number;
  /** Per 5 minutes: sign-ups per e-mail, code and reset requests per (IP, e-mail), sign-in failures per e-mail. */
  PLINTH_RATE_LIMIT_EMAIL: number;
  /** `iss` claim of access tokens. */
  PLINTH_ISSUER: string;
  /**
   * Proxies in front of the gateway (the gateway's own setting, same variable). The service
   * trusts that many X-Forwarded-For hops, plus one for the gateway's proxy hop when it runs as
   * its own process (main.ts); see docs/auth.md "Client IP".
   */
  PLINTH_TRUST_PROXY: number;
  /** Days an anonymous user may go unused (no sign-in, no refresh) before it is removed (default 30). */
  PLINTH_ANONYMOUS_MAX_IDLE_DAYS: number;
  /** Key material for the encryption of TOTP secrets at rest (default: derived from PLINTH_INTERNAL_SECRET). */
  PLINTH_MFA_KEY?: string;
  /** The address users reach the gateway at; provider callbacks come back under it (docs/auth.md "Sign-in with a provider"). */
  PLINTH_PUBLIC_URL: string;
  /** Provider addresses (issuers, GitHub Enterprise) may be http: for local testing only. */
  PLINTH_OAUTH_ALLOW_HTTP: boolean;
  /** Longest wait for one request to a provider (discovery, keys, token, user), ms. */
  PLINTH_OAUTH_FETCH_TIMEOUT_MS: number;
  /**
   * With a Redis mail queue: how often auth checks the mails it stored against the queue and
   * enqueues again those the queue lost (mail/redis-safe-mail-outbox.ts), ms.
   */
  PLINTH_MAIL_RECHECK_MS: number;
}

export const authConfigSchema = Joi.object<AuthConfig>({
  // First: REDIS_URL and PLINTH_DATA_DIR are the same definitions in every key set.
  ...webhookQueueConfigKeys,
  PORT: commonConfig.port(8082),
  PLINTH_INTERNAL_SECRET: commonConfig.internalSecret.required(),
  LOG_LEVEL: commonConfig.logLevel,
  ...mailQueueConfigKeys,
  ...nonceConfigKeys,
  ...revocationSyncConfigKeys,
  MONGO_URL: commonConfig.mongoUrl,
  PLINTH_MONGO_COMMIT_TIMEOUT_MS: commonConfig.mongoCommitTimeoutMs,
  PLINTH_BCRYPT_COST: Joi.number().integer().min(4).max(15).default(10),
  UV_THREADPOOL_SIZE: Joi.number().integer().min(1).max(1024).default(4),
  PLINTH_HASH_CONCURRENCY: Joi.number().integer().min(1).max(1024),
  PLINTH_HASH_MAX_QUEUED: Joi.number().integer().min(0).max(100_000).default(64),
  PLINTH_HASH_MAX_WAIT_MS: Joi.number().integer().min(1).max(60_000).default(1000),
  PLINTH_RATE_LIMIT_IP: Joi.number().integer().min(1).default(30),
  PLINTH_RATE_LIMIT_EMAIL: Joi.number().integer().min(1).default(10),
  PLINTH_ISSUER: Joi.string().min(1).default('plinth'),
  PLINTH_TRUST_PROXY: Joi.number().integer().min(0).max(10).default(0),
  PLINTH_ANONYMOUS_MAX_IDLE_DAYS: Joi.number().positive().max(3650).default(30),
  PLINTH_MFA_KEY: Joi.string().min(32),
  PLINTH_PUBLIC_URL: Joi.string().uri({ scheme: ['http', 'https'] }).default('http://localhost:8080'),
  PLINTH_OAUTH_ALLOW_HTTP: Joi.boolean().default(false),
  PLINTH_OAUTH_FETCH_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(5000),
  PLINTH_MAIL_RECHECK_MS: Joi.number().integer().min(50).max(3_600_000).default(5000),
});
