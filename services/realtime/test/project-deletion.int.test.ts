/**
 * Deleting a project ends its realtime connections and forgets its change events, in both
 * topologies (cluster: two realtime replicas on Redis Streams). A project re-created with the
 * same id never hands the old tenant's events to a client, whatever `resume_from` it sends.
 */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { call, projectCall, type ProjectAccess } from '../../../test/e2e/support/api';
import { RtClient } from './support/rt-client';

const RUN = `${process.pid.toString(36)}${Date.now().toString(36)}`;
let t: TestPlinth;
let url: string;
const clients: RtClient[] = [];

beforeAll(async () => {
  t = await startTestPlinth({ realtimeReplicas: 2, env: { PLINTH_PURGE_TIMEOUT_MS: '2000', PLINTH_PURGE_RETRY_MS: '100' } });
  url = await t.url();
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  await t?.close();
  expect(await t?.leftoverRedisKeys()).toEqual([]);
});

async function createProject(id: string): Promise<ProjectAccess> {
  const res = await call<{ keys: { public: string; secret: string } }>(url, 'POST', '/v1/admin/projects', { key: t.adminKey, body: { id } });
  expect(res.status).toBe(201);
  return { url, id, publicKey: res.body.keys.public, secretKey: res.body.keys.secret };
}

async function connect(p: ProjectAccess): Promise<RtClient> {
  const c = await RtClient.connect(url, p.id, { queryKey: p.publicKey });
  clients.push(c);
  return c;
}

/** How the server closed the connection, or 'still open' after `ms` (a bounded wait). */
async function closedWithin(c: RtClient, ms: number): Promise<{ code: number; reason: string } | 'still open'> {
  let timer: NodeJS.Timeout | undefined;
  const open = new Promise<'still open'>((r) => (timer = setTimeout(() => r('still open'), ms)));
  try {
    return await Promise.race([c.closed, open]);
  } finally {
    clearTimeout(timer);
  }
}

async function createNotes(p: ProjectAccess): Promise<void> {
  const body = { name: 'notes', fields: { title: { type: 'text' } }, rules: { read: 'true' } };
  expect((await projectCall(p, 'POST', '/collections', { key: p.secretKey, body })).status).toBe(201);
}

async function write(p: ProjectAccess, title: string): Promise<string> {
  const res = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/notes/records', { key: p.secretKey, body: { data: { title } } });
  expect(res.status).toBe(201);
  return res.body.record.id;
}

it('closes the project’s connections with 4004, and a re-created project never replays the old tenant’s events', async () => {
  const id = `rtdel-${RUN}`;
  const old = await createProject(id);
  await createNotes(old);
  // Several connections, so that in a cluster both replicas are likely to hold some.
  const olds = await Promise.all([0, 1, 2, 3].map(() => connect(old)));
  for (const c of olds) expect(await c.subscribe('n', { collection: 'notes' })).toMatchObject({ type: 'subscribed' });
  if (t.cluster) {
    // The gateway spreads connections round robin: every replica holds some, and each must close its own.
    for (const r of t.cluster.processes.filter((x) => x.name.startsWith('realtime-'))) {
      const text = await (await fetch(`${r.url}/metrics`)).text();
      expect(text).toMatch(/^plinth_realtime_connections\{[^}]*\} [1-9]/m);
    }
  }
  const secretId = await write(old, 'old tenant secret');
  let lastOldSeq = 0;
  for (const c of olds) lastOldSeq = Math.max(lastOldSeq, (await c.waitForEvents('n', 1))[0]!.seq);

  const del = await call(url, 'DELETE', `/v1/admin/projects/${id}`, { key: t.adminKey });
  expect(del.status).toBe(200);
  expect(del.body).toMatchObject({ deleted: true, id, purge: 'done' });
  for (const c of olds) expect(await closedWithin(c, 10_000)).toEqual({ code: 4004, reason: 'project deleted' });

  const fresh = await createProject(id);
  await createNotes(fresh);
  const c = await connect(fresh);
  // From the very beginning, and from the old tenant's last position: a resync, never a replay.
  for (const [sub, resume] of [
    ['zero', 0],
    ['old', lastOldSeq],
  ] as const) {
    expect(await c.subscribe(sub, { collection: 'notes', resume_from: resume })).toMatchObject({ type: 'subscribed', resumed: false });
    const resync = await c.next((m) => m.type === 'resync_required' && m.id === sub);
    expect(resync.seq).toBeGreaterThan(lastOldSeq);
    expect(await c.next((m) => m.type === 'snapshot' && m.id === sub)).toMatchObject({ records: [] });
  }
  // New writes are delivered to both subscriptions, with seqs above the old tenant's.
  const newId = await write(fresh, 'new tenant');
  for (const sub of ['zero', 'old']) {
    const events = await c.waitForEvents(sub, 1);
    expect(events.map((e) => `${e.kind}:${e.record.id}`)).toEqual([`create:${newId}`]);
    expect(events[0]!.seq).toBeGreaterThan(lastOldSeq);
  }
  // A client resuming from the new head is resumed, not resynced.
  const head = c.events('zero')[0]!.seq;
  const d = await connect(fresh);
  const epoch = c.messages.find((m) => m.type === 'subscribed')!.epoch;
  expect(await d.subscribe('h', { collection: 'notes', resume_from: head, resume_epoch: epoch })).toMatchObject({ type: 'subscribed', resumed: true, seq: head });
  // Nothing the old tenant wrote reached the new tenant's clients.
  const seen = JSON.stringify([...c.messages, ...d.messages]);
  expect(seen).not.toContain(secretId);
  expect(seen).not.toContain('old tenant secret');
});
