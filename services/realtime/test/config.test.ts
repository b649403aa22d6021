import { ConfigError, loadConfig } from '@plinth/shared';
import { realtimeConfigSchema } from '@plinth/realtime';

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
    PLINTH_EVENTS_MAX: 100_000,
    PLINTH_EVENTS_MAX_AGE_MINUTES: 60,
  });
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
