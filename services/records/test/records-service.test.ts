/** Configuration and wiring of the records service (docs/architecture.md "Process behaviour": a bad value names itself). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ConfigError, asProjectId, createLogger, internalHeaders, loadConfig, openSqlite } from '@plinth/shared';
import { buildRecordsService, recordsConfigSchema } from '../src';

const SECRET = 's'.repeat(40);

it('MONGO_URL is optional and must be a mongodb URL', () => {
  expect(loadConfig(recordsConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET }).MONGO_URL).toBeUndefined();
  expect(loadConfig(recordsConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET, MONGO_URL: 'mongodb://db:27017/plinth' }).MONGO_URL).toBe(
    'mongodb://db:27017/plinth',
  );
  expect(() => loadConfig(recordsConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET, MONGO_URL: 'http://db' })).toThrow(ConfigError);
  expect(() => loadConfig(recordsConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET, MONGO_URL: 'http://db' })).toThrow(/MONGO_URL/);
});

it('the anonymous rate-limit ceiling defaults to half the public-key ceiling and must be lower than it', () => {
  const load = (env: Record<string, string>) => loadConfig(recordsConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET, ...env });
  expect(load({})).toMatchObject({ PLINTH_RATE_LIMIT_PUBLIC_KEY: 6000, PLINTH_RATE_LIMIT_ANONYMOUS: 3000, PLINTH_RATE_LIMIT_ADDRESS: 600 });
  expect(load({ PLINTH_RATE_LIMIT_PUBLIC_KEY: '100' }).PLINTH_RATE_LIMIT_ANONYMOUS).toBe(50);
  expect(load({ PLINTH_RATE_LIMIT_PUBLIC_KEY: '100', PLINTH_RATE_LIMIT_ANONYMOUS: '99' }).PLINTH_RATE_LIMIT_ANONYMOUS).toBe(99);
  expect(() => load({ PLINTH_RATE_LIMIT_PUBLIC_KEY: '100', PLINTH_RATE_LIMIT_ANONYMOUS: '100' })).toThrow(/PLINTH_RATE_LIMIT_ANONYMOUS/);
  expect(() => load({ PLINTH_RATE_LIMIT_ADDRESS: '0' })).toThrow(/PLINTH_RATE_LIMIT_ADDRESS/);
});

it('without MONGO_URL the records live in ${PLINTH_DATA_DIR}/records.db and /readyz answers', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-records-'));
  try {
    const config = loadConfig(recordsConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET, PLINTH_DATA_DIR: dir });
    const service = await buildRecordsService(config, createLogger('test', 'silent'));
    expect(fs.existsSync(path.join(dir, 'records.db'))).toBe(true);
    expect((await request(service.app).get('/readyz')).status).toBe(200);
    await service.close();
    expect((await request(service.app).get('/readyz')).status).toBe(503);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('without Redis, the per-key rate limit counts every request in limits.db, the ones a process held unwritten included', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-records-'));
  try {
    // A secret-key limit of 1000 a minute: the process may hold 10 hits before it writes them.
    const config = loadConfig(recordsConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET, PLINTH_DATA_DIR: dir, PLINTH_RATE_LIMIT_SECRET_KEY: '1000' });
    const service = await buildRecordsService(config, createLogger('test', 'silent'));
    const project = asProjectId('limited');
    const path_ = `/v1/projects/${project}/collections`;
    for (let i = 0; i < 5; i++) {
      const res = await request(service.app)
        .get(path_)
        .set(internalHeaders(SECRET, { project, keyKind: 'secret', requestId: `r${i}` }, { method: 'GET', path: path_ }));
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit']).toMatch(new RegExp(`remaining=${1000 - i - 1}\\b`));
    }
    const stored = () => {
      const db = openSqlite(path.join(dir, 'limits.db'));
      try {
        return (db.prepare("SELECT hits FROM rate_limits WHERE key = 'records:key:limited:secret'").get() as { hits: number }).hits;
      } finally {
        db.close();
      }
    };
    // Written by then: at once (the first hit), in a batch, by the 20 ms timer, or at close.
    await service.close();
    expect(stored()).toBe(5);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
