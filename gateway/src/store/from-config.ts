import path from 'node:path';
import { openOnMongo } from '@plinth/shared';
import type { ProjectStore } from './project-store';
import { MongoProjectStore } from './mongo-project-store';
import { SqliteProjectStore } from './sqlite-project-store';

/** MongoDB when a URL is given (cluster mode), else `gateway.db` in the data directory. */
export async function createProjectStore(opts: { mongoUrl?: string; dataDir: string; commitTimeoutMs?: number }): Promise<ProjectStore> {
  if (opts.mongoUrl) {
    return openOnMongo(opts.mongoUrl, (client, release) => new MongoProjectStore(client.db(), release, { commitTimeoutMs: opts.commitTimeoutMs }).init());
  }
  return new SqliteProjectStore(path.join(opts.dataDir, 'gateway.db'));
}
