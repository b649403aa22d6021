import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisRevocationChecker, RedisRevocationSync, UnavailableError, asProjectId, dataSetId, syncedKey } from '@plinth/shared';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const P = asProjectId('sync-test');

/**
 * A reader (records, realtime) trusts a Redis data set only once auth has said, in the sync key,
 * that it replayed the durable revocation log into exactly that data set.
 */
describe('RedisRevocationSync', () => {
  let redis: Redis;
  let prefix: string;
  beforeEach(async () => {
    redis = new Redis(REDIS_URL);
    prefix = `test:revsync:${randomBytes(6).toString('hex')}:`;
  });
  afterEach(async () => {
    await redis.del(syncedKey(prefix), `${prefix}sess:${P}:ses_1`);
    redis.disconnect();
  });

  it('a reader answers 503 until the sync key names this data set, then reads revocations', async () => {
    const sync = new RedisRevocationSync(redis, prefix);
    const checker = new RedisRevocationChecker(redis, prefix, { sync });
    await redis.hset(`${prefix}sess:${P}:ses_1`, 'user_id', 'usr_1', 'expires_at', Date.now() + 60_000);
    await expect(checker.isRevoked(P, 'ses_1', 1)).rejects.toThrow(UnavailableError);
    // Another data set's name (before a failover) does not count.
    await redis.set(syncedKey(prefix), 'some-other-run/some-other-replid');
    await expect(checker.isRevoked(P, 'ses_1', 1)).rejects.toThrow(UnavailableError);
    await redis.set(syncedKey(prefix), await dataSetId(redis));
    expect(await checker.isRevoked(P, 'ses_1', 1)).toBe(false);
    sync.stop();
  });

  it('the writer (auth) replays, then names the data set; a second writer finds it named and replays nothing', async () => {
    let replays = 0;
    const writer = new RedisRevocationSync(redis, prefix, { replay: async () => void replays++ });
    await writer.ready(5000);
    expect(await redis.get(syncedKey(prefix))).toBe(await dataSetId(redis));
    const again = new RedisRevocationSync(redis, prefix, { replay: async () => void replays++ });
    await again.ready(5000);
    expect(replays).toBe(1);
    writer.stop();
    again.stop();
  });
});
