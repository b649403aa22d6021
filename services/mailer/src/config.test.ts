import { ConfigError, loadConfig } from '@plinth/shared';
import { mailerConfigSchema } from './config';

const secret = { PLINTH_INTERNAL_SECRET: 'x'.repeat(32) };

describe('mailer configuration', () => {
  it('defaults to the embedded outbox and the dev mailbox, 5 attempts with a 5 s exponential backoff', () => {
    expect(loadConfig(mailerConfigSchema, secret)).toEqual({
      ...secret,
      PORT: 8083,
      PLINTH_DATA_DIR: './data',
      LOG_LEVEL: 'info',
      PLINTH_MAIL_ATTEMPTS: 5,
      PLINTH_MAIL_BACKOFF_MS: 5000,
      PLINTH_MAIL_POLL_MS: 1000,
      PLINTH_MAIL_FROM: 'Plinth <no-reply@localhost>',
      PLINTH_PUBLIC_URL: 'http://localhost:8080',
      PLINTH_MAIL_CONCURRENCY: 4,
      PLINTH_SMTP_TIMEOUT_MS: 30000,
      PLINTH_NONCE_PREFIX: 'plinth:internal:nonce:',
    });
  });

  it('names every bad variable', () => {
    const env = { ...secret, SMTP_URL: 'http://mail.example.com', PLINTH_MAIL_ATTEMPTS: '0', REDIS_URL: 'nope' };
    expect(() => loadConfig(mailerConfigSchema, env)).toThrow(ConfigError);
    expect(() => loadConfig(mailerConfigSchema, env)).toThrow(/SMTP_URL[\s\S]*PLINTH_MAIL_ATTEMPTS|PLINTH_MAIL_ATTEMPTS[\s\S]*SMTP_URL/);
    expect(() => loadConfig(mailerConfigSchema, env)).toThrow(/REDIS_URL/);
  });
});
