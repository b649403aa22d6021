import path from 'node:path';
import { openOnMongo } from '@plinth/shared';
import type { ProjectStore } from './project-store';
import { MongoProjectStore } from './mongo-project-store';
import { SqliteProjectStore } from './sqlite-project-store';

/**
 * MongoDB when a URL is given (cluster mode), else `gateway.db` in the data directory.
 * `internalSecret`: PLINTH_INTERNAL_SECRET, from which the key sealing operators' TOTP secrets derives.
 */
export async function createProjectStore(opts: { mongoUrl?: string; dataDir: string; internalSecret: string; commitTimeoutMs?: number }): Promise<ProjectStore> {
  const { internalSecret, commitTimeoutMs } = opts;
  if (opts.mongoUrl) {
    return openOnMongo(opts.mongoUrl, (client, release) => new MongoProjectStore(client.db(), { internalSecret, commitTimeoutMs, onClose: release }).init());
  }
  return new SqliteProjectStore(path.join(opts.dataDir, 'gateway.db'), { internalSecret });
}
