/** Configuration and wiring of the records service (DESIGN.md §9: a bad value names itself). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ConfigError, createLogger, loadConfig } from '@plinth/shared';
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
