import { ConfigError, loadConfig } from '@plinth/shared';
import fs from 'node:fs';
import { realtimeConfigSchema } from '@plinth/realtime';
import { connectionsBelowFileLimit } from '../src/config';

const SECRET = 'x'.repeat(40);

it('has documented defaults', () => {
  expect(loadConfig(realtimeConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET })).toMatchObject({
    PORT: 8084,
    REALTIME_MAX_BUFFERED_BYTES: 4_194_304,
    REALTIME_MAX_MESSAGE_BYTES: 65_536,
    REALTIME_MAX_SUBSCRIPTIONS_PER_CONNECTION: 100,
    REALTIME_MAX_CONNECTIONS_PER_PROJECT: 10_000,
    REALTIME_PING_INTERVAL_MS: 25_000,
    REALTIME_IDLE_TIMEOUT_MS: 60_000,
    REALTIME_REVOCATION_CHECK_MS: 250,
    REALTIME_CATCHUP_MAX_EVENTS: 10_000,
    REALTIME_CATCHUP_MAX_BYTES: 2_097_152,
    REALTIME_CATCHUP_BYTES_PER_MINUTE_PER_CONNECTION: 16_777_216,
    REALTIME_CATCHUP_BYTES_PER_MINUTE_PER_PROJECT: 67_108_864,
    REALTIME_CATCHUPS_PER_PROJECT: 4,
    REALTIME_CATCHUPS_PER_PROCESS: 8,
    REALTIME_CATCHUP_WAIT_MS: 5000,
    REALTIME_MAX_PUBLIC_CONNECTIONS_PER_PROJECT: 9000,
    REALTIME_MAX_CONNECTIONS_PER_ADDRESS: 100,
    REALTIME_MAX_CONNECTIONS_PER_USER: 20,
    REALTIME_MESSAGES_PER_SECOND: 20,
    REALTIME_MESSAGE_BURST: 200,
    PLINTH_EVENTS_MAX: 100_000,
    PLINTH_EVENTS_MAX_AGE_MINUTES: 60,
  });
});

it('takes REALTIME_MAX_CONNECTIONS below the process’s file-descriptor limit by default', () => {
  const max = loadConfig(realtimeConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET }).REALTIME_MAX_CONNECTIONS;
  expect(max).toBe(connectionsBelowFileLimit());
  const limit = /^Max open files\s+(\d+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
  if (limit) expect(max).toBeLessThan(Number(limit[1]));
});

it.each([
  ['REALTIME_MAX_BUFFERED_BYTES', 'lots'],
  ['REALTIME_REVOCATION_CHECK_MS', '5000'],
  ['RECORDS_URL', 'records:8081'],
  ['PLINTH_EVENTS_MAX', '10'],
])('refuses a bad %s, naming it', (name, value) => {
  expect(() => loadConfig(realtimeConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET, [name]: value })).toThrow(new RegExp(name));
  expect(() => loadConfig(realtimeConfigSchema, { PLINTH_INTERNAL_SECRET: SECRET, [name]: value })).toThrow(ConfigError);
});
