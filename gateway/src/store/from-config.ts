import path from 'node:path';
import { acquireMongoClient } from '@plinth/shared';
import type { ProjectStore } from './project-store';
import { MongoProjectStore } from './mongo-project-store';
import { SqliteProjectStore } from './sqlite-project-store';

/** MongoDB when a URL is given (cluster mode), else `gateway.db` in the data directory. */
export async function createProjectStore(opts: { mongoUrl?: string; dataDir: string }): Promise<ProjectStore> {
  if (opts.mongoUrl) {
    const { client, release } = await acquireMongoClient(opts.mongoUrl);
    return new MongoProjectStore(client.db(), release).init();
  }
  return new SqliteProjectStore(path.join(opts.dataDir, 'gateway.db'));
}
