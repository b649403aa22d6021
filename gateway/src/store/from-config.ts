import path from 'node:path';
import { MongoClient } from 'mongodb';
import type { ProjectStore } from './project-store';
import { MongoProjectStore } from './mongo-project-store';
import { SqliteProjectStore } from './sqlite-project-store';

/** MongoDB when a URL is given (cluster mode), else `gateway.db` in the data directory. */
export async function createProjectStore(opts: { mongoUrl?: string; dataDir: string }): Promise<ProjectStore> {
  if (opts.mongoUrl) {
    const client = await new MongoClient(opts.mongoUrl).connect();
    return new MongoProjectStore(client.db(), () => client.close()).init();
  }
  return new SqliteProjectStore(path.join(opts.dataDir, 'gateway.db'));
}
