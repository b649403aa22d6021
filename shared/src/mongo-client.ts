/**
 * One MongoClient per MongoDB URL per process. In standalone mode with MONGO_URL the gateway,
 * records and auth run in one process; each acquiring its own client would open a connection
 * pool (and monitoring connections) per service. The client is closed when its last user
 * releases it.
 *
 * Every client is made the same way: majority writes with a time limit, reads from the primary
 * whatever the URL says (read-your-writes: a deleted key must stop authenticating at once), a
 * bounded wait for a server, `appName` plinth, and a check that the server is a replica set
 * member or a mongos — Plinth's transactions need one, and a standalone mongod would otherwise
 * start, report ready and then fail those requests.
 */
import type { ClientSession, MongoClient, TransactionOptions, WriteConcernSettings } from 'mongodb';
import { StartupError } from './startup';

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

/** How long one transaction commit may take (maxCommitTimeMS) unless configured. */
export const DEFAULT_COMMIT_TIMEOUT_MS = 5_000;

/** How long an operation waits for a usable server when the URL does not say. */
export const SERVER_SELECTION_TIMEOUT_MS = 5_000;

/**
 * Options of every transaction: snapshot reads on the primary, majority commit, and a commit
 * bounded by `maxCommitTimeMS`. Without that bound a commit whose write concern times out is
 * retried by the driver for up to 120 s (its `timeoutMS` does not bound it); with it the server
 * ends the commit with MaxTimeMSExpired, which the driver does not retry, and the request
 * answers 503.
 */
export function transactionOptions(commitTimeoutMs: number = DEFAULT_COMMIT_TIMEOUT_MS, writeConcern: WriteConcernSettings = MONGO_MAJORITY): TransactionOptions {
  return { writeConcern, readConcern: { level: 'snapshot' }, readPreference: 'primary', maxCommitTimeMS: commitTimeoutMs };
}

/**
 * Runs `fn` in a transaction of a session of its own, with `options` (transactionOptions): the
 * driver's `withTransaction` runs it again on a transient error and retries an unknown commit.
 * The session ends either way.
 */
export async function inMongoTransaction<T>(client: MongoClient, options: TransactionOptions, fn: (session: ClientSession) => Promise<T>): Promise<T> {
  const session = client.startSession();
  try {
    return await session.withTransaction(() => fn(session), options);
  } finally {
    await session.endSession();
  }
}

/** Names the server must have answered `hello` with for transactions to work. */
export const REPLICA_SET_REQUIRED =
  'MONGO_URL points at a standalone mongod: Plinth needs a replica set (or a sharded cluster) for its transactions. Start mongod with --replSet and run rs.initiate() once (one member is enough), then connect with ?replicaSet=<name>.';

/** Throws StartupError unless the server is a replica-set member or a mongos (hello's setName / msg). */
export async function requireReplicaSet(client: MongoClient): Promise<void> {
  const hello = await client.db('admin').command({ hello: 1 });
  if (typeof hello.setName === 'string' || hello.msg === 'isdbgrid') return;
  throw new StartupError(REPLICA_SET_REQUIRED);
}

/** The URL's own value of a connection option, case-insensitively (the driver reads them so). */
function urlSets(url: string, option: string): boolean {
  const query = url.split('?')[1] ?? '';
  return query.split('&').some((pair) => pair.split('=')[0]?.toLowerCase() === option.toLowerCase());
}

function newClient(url: string): MongoClient {
  return new (loadMongodb().MongoClient)(url, {
    writeConcern: MONGO_MAJORITY,
    // Options given here win over the URL's: a secondary read preference cannot slip in.
    readPreference: 'primary',
    ...(urlSets(url, 'serverSelectionTimeoutMS') ? {} : { serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS }),
    ...(urlSets(url, 'appName') ? {} : { appName: 'plinth' }),
  });
}

const shared = new Map<string, { connecting: Promise<MongoClient>; users: number }>();

export async function acquireMongoClient(url: string): Promise<SharedMongoClient> {
  let entry = shared.get(url);
  if (!entry) {
    const client = newClient(url);
    const connecting = client.connect().then(async (connected) => {
      await requireReplicaSet(connected);
      return connected;
    });
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

/**
 * Opens a store on the process' shared client; when `open` throws (its indexes cannot be
 * made, …) this share is released, so a failed start leaves no client open.
 */
export async function openOnMongo<T>(url: string, open: (client: MongoClient, release: () => Promise<void>) => Promise<T>): Promise<T> {
  const { client, release } = await acquireMongoClient(url);
  try {
    return await open(client, release);
  } catch (err) {
    await release().catch(() => {});
    throw err;
  }
}
