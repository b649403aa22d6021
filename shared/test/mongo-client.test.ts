/** One MongoClient per URL per process: concurrent acquirers share one connection attempt. */
import net from 'node:net';
import { acquireMongoClient } from '../src/mongo-client';

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
