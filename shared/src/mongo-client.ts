/**
 * One MongoClient per MongoDB URL per process. In standalone mode with MONGO_URL the gateway,
 * records and auth run in one process; each acquiring its own client would open a connection
 * pool (and monitoring connections) per service. The client is closed when its last user
 * releases it.
 */
import type { MongoClient } from 'mongodb';

/**
 * The MongoDB driver, loaded on first use: a process without MONGO_URL (standalone on SQLite)
 * does not load it. Code that runs only with MongoDB uses it for values (MongoServerError, …).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const loadMongodb = (): typeof import('mongodb') => require('mongodb') as typeof import('mongodb');

export interface SharedMongoClient {
  client: MongoClient;
  /** Releases this user's share; the last release closes the client. */
  release: () => Promise<void>;
}

/** Majority writes that fail after 10 s without replication instead of waiting forever. */
export const MONGO_MAJORITY = { w: 'majority' as const, wtimeoutMS: 10_000 };

const shared = new Map<string, { connecting: Promise<MongoClient>; users: number }>();

export async function acquireMongoClient(url: string): Promise<SharedMongoClient> {
  let entry = shared.get(url);
  if (!entry) {
    const client = new (loadMongodb().MongoClient)(url, { writeConcern: MONGO_MAJORITY });
    const connecting = client.connect();
    entry = { connecting, users: 0 };
    shared.set(url, entry);
    connecting.catch(() => {
      shared.delete(url);
      void client.close().catch(() => {});
    });
  }
  entry.users++;
  const current = entry;
  const client = await current.connecting;
  let released = false;
  return {
    client,
    release: async () => {
      if (released) return;
      released = true;
      current.users--;
      if (current.users === 0) {
        if (shared.get(url) === current) shared.delete(url);
        await client.close();
      }
    },
  };
}
