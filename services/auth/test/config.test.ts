import { ConfigError, loadConfig } from '@plinth/shared';
import { authConfigSchema } from '../src/config';

const BASE = { PLINTH_INTERNAL_SECRET: 'x'.repeat(32) };

describe('auth configuration', () => {
  it('has the documented defaults', () => {
    expect(loadConfig(authConfigSchema, BASE)).toEqual({
      ...BASE,
      PORT: 8082,
      PLINTH_DATA_DIR: './data',
      LOG_LEVEL: 'info',
      PLINTH_BCRYPT_COST: 10,
      UV_THREADPOOL_SIZE: 4,
      PLINTH_HASH_MAX_QUEUED: 64,
      PLINTH_HASH_MAX_WAIT_MS: 1000,
      PLINTH_RATE_LIMIT_IP: 30,
      PLINTH_RATE_LIMIT_EMAIL: 10,
      PLINTH_ISSUER: 'plinth',
      PLINTH_TRUST_PROXY: 0,
      PLINTH_ANONYMOUS_MAX_IDLE_DAYS: 30,
      PLINTH_MAIL_ATTEMPTS: 5,
      PLINTH_MAIL_BACKOFF_MS: 5000,
      PLINTH_MAIL_POLL_MS: 1000,
      PLINTH_NONCE_PREFIX: 'plinth:internal:nonce:',
      PLINTH_MONGO_COMMIT_TIMEOUT_MS: 5000,
      PLINTH_REVOCATION_SYNC_PREFIX: 'plinth:auth:revocations:',
      // The webhook queue auth puts user events on (docs/webhooks.md).
      PLINTH_WEBHOOK_BACKOFF_MS: 5000,
      PLINTH_WEBHOOK_POLL_MS: 1000,
      PLINTH_WEBHOOK_RETRY_WINDOW_MS: 86_400_000,
      PLINTH_PUBLIC_URL: 'http://localhost:8080',
      PLINTH_OAUTH_ALLOW_HTTP: false,
      PLINTH_OAUTH_FETCH_TIMEOUT_MS: 5000,
      PLINTH_MAIL_RECHECK_MS: 5000,
    });
  });

  it('reads Redis, Mongo and the limits from the environment', () => {
    const c = loadConfig(authConfigSchema, {
      ...BASE,
      REDIS_URL: 'redis://cache:6379',
      MONGO_URL: 'mongodb://db:27017/plinth',
      PLINTH_BCRYPT_COST: '4',
      PLINTH_RATE_LIMIT_IP: '100',
      PLINTH_RATE_LIMIT_EMAIL: '5',
      PLINTH_ISSUER: 'https://auth.example',
    });
    expect(c).toMatchObject({
      REDIS_URL: 'redis://cache:6379',
      MONGO_URL: 'mongodb://db:27017/plinth',
      PLINTH_BCRYPT_COST: 4,
      PLINTH_RATE_LIMIT_IP: 100,
      PLINTH_RATE_LIMIT_EMAIL: 5,
      PLINTH_ISSUER: 'https://auth.example',
    });
  });

  it.each([
    ['PLINTH_BCRYPT_COST', '3'],
    ['PLINTH_RATE_LIMIT_IP', '0'],
    ['PLINTH_RATE_LIMIT_EMAIL', 'many'],
    ['REDIS_URL', 'http://cache'],
    ['MONGO_URL', 'postgres://db'],
  ])('refuses %s=%s with a message naming it', (name, value) => {
    expect(() => loadConfig(authConfigSchema, { ...BASE, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig(authConfigSchema, { ...BASE, [name]: value })).toThrow(name);
  });
});
