/**
 * A realtime server the gateway's purge call did not reach (in Kubernetes, another pod behind the
 * same Service URL) still closes the deleted project's connections: it watches the event log's
 * purge points. Standalone, with the in-process realtime purge step taken out of the list.
 */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { call } from '../../../test/e2e/support/api';
import { RtClient } from './support/rt-client';

let t: TestPlinth;
let url: string;

beforeAll(async () => {
  t = await startTestPlinth();
  url = await t.url();
});
afterAll(() => t?.close());

it('closes a deleted project’s connections with 4004 even when its purge call never came', async () => {
  const purges = t.standalone!.purges;
  const step = purges.find((s) => s.name === 'realtime')!;
  expect(step).toBeDefined();
  const at = purges.indexOf(step);
  purges.splice(at, 1);
  const id = `rtback-${process.pid.toString(36)}${Date.now().toString(36)}`;
  const created = await call<{ keys: { public: string } }>(url, 'POST', '/v1/admin/projects', { key: t.adminKey, body: { id } });
  expect(created.status).toBe(201);
  const c = await RtClient.connect(url, id, { queryKey: created.body.keys.public });
  // A connection of another project stays open.
  const other = await RtClient.connect(url, t.project.id, { queryKey: t.project.publicKey });
  try {
    expect((await call(url, 'DELETE', `/v1/admin/projects/${id}`, { key: t.adminKey })).status).toBe(200);
    let timer: NodeJS.Timeout | undefined;
    const open = new Promise<'still open'>((r) => (timer = setTimeout(() => r('still open'), 10_000)));
    expect(await Promise.race([c.closed, open])).toEqual({ code: 4004, reason: 'project deleted' });
    clearTimeout(timer);
    other.send({ type: 'ping' });
    expect(await other.next((m) => m.type === 'pong')).toMatchObject({ type: 'pong' });
  } finally {
    purges.splice(at, 0, step);
    c.close();
    other.close();
  }
});
