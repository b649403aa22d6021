/** One MongoClient per URL per process, made the same way every time. */
import net from 'node:net';
import { acquireMongoClient, REPLICA_SET_REQUIRED, SERVER_SELECTION_TIMEOUT_MS } from '../src/mongo-client';
import { StartupError } from '../src/startup';
import { waitFor } from '../src/testing/wait-for';
import { startWireMongod, type WireMongod } from '../src/testing/wire-mongod';

/** A port with nothing listening (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

it('shares one connection attempt between acquirers of the same URL, and forgets a failed one', async () => {
  const url = `mongodb://127.0.0.1:${await closedPort()}/?serverSelectionTimeoutMS=300&directConnection=true`;
  const [a, b] = await Promise.allSettled([acquireMongoClient(url), acquireMongoClient(url)]);
  expect(a.status).toBe('rejected');
  expect(b.status).toBe('rejected');
  expect((a as PromiseRejectedResult).reason).toBe((b as PromiseRejectedResult).reason);
  const again = await acquireMongoClient(url).catch((e: unknown) => e);
  expect(again).not.toBe((a as PromiseRejectedResult).reason);
});

describe('every client is made the same way (on the wire stand-in)', () => {
  let mongod: WireMongod;
  beforeEach(async () => {
    mongod = await startWireMongod({ replicaSet: 'rs0' });
  });
  afterEach(() => mongod.close());
  const port = () => new URL(mongod.url).port;

  it('reads from the primary whatever the URL asks, waits 5 s at most for a server, and sends appName plinth', async () => {
    const url = `mongodb://127.0.0.1:${port()}/plinth?directConnection=true&readPreference=secondaryPreferred`;
    const { client, release } = await acquireMongoClient(url);
    try {
      expect(client.readPreference.mode).toBe('primary');
      expect(client.db().readPreference.mode).toBe('primary');
      expect(client.options.serverSelectionTimeoutMS).toBe(SERVER_SELECTION_TIMEOUT_MS);
      expect(client.options.appName).toBe('plinth');
    } finally {
      await release();
    }
  });

  it("keeps the URL's own server selection timeout and appName", async () => {
    const url = `mongodb://127.0.0.1:${port()}/plinth?directConnection=true&serverSelectionTimeoutMS=1500&appName=shop-records`;
    const { client, release } = await acquireMongoClient(url);
    try {
      expect(client.options.serverSelectionTimeoutMS).toBe(1500);
      expect(client.options.appName).toBe('shop-records');
    } finally {
      await release();
    }
  });

  it('refuses a standalone mongod with one line naming the replica-set requirement, and closes the client', async () => {
    const standalone = await startWireMongod();
    try {
      await expect(acquireMongoClient(standalone.url)).rejects.toThrow(new StartupError(REPLICA_SET_REQUIRED));
      await waitFor('the refused client to close its connections', () => standalone.openConnections() === 0, { timeoutMs: 5_000 });
    } finally {
      await standalone.close();
    }
  });
});
