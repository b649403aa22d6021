import path from 'node:path';
import type { Logger } from 'pino';
import { openSqlite } from '../sqlite';
import type { Announcements } from './announcements';
import { RedisAnnouncements } from './redis-announcements';
import { SqliteAnnouncements } from './sqlite-announcements';

/**
 * The bus of a deployment: Redis pub/sub on REDIS_URL (cluster replicas), else a table in
 * `${PLINTH_DATA_DIR}/announcements.db` that every process over that directory reads (standalone
 * workers). The caller closes it.
 */
export async function createAnnouncementsFromConfig(
  config: { REDIS_URL?: string; PLINTH_DATA_DIR: string },
  logger?: Logger,
): Promise<Announcements> {
  if (config.REDIS_URL) return RedisAnnouncements.start(config.REDIS_URL, logger);
  const db = openSqlite(path.join(config.PLINTH_DATA_DIR, 'announcements.db'));
  const bus = new SqliteAnnouncements(db);
  return {
    publish: (a) => bus.publish(a),
    subscribe: (l) => bus.subscribe(l),
    catchUp: () => bus.catchUp(),
    close: async () => {
      await bus.close();
      db.close();
    },
  };
}
