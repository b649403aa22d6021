/**
 * A subscription belongs to the identity that made it: `auth` with a token, then
 * `subscribe`, then `auth: null` a few milliseconds later while the subscription still resolves —
 * a hundred times, deliberately racing. Whatever the interleaving, the subscription ends up
 * resolved under the connection's identity of now (anonymous: the public records only), never
 * with the user's predicate on an anonymous connection that revocation no longer reaches.
 */
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { enableAuth, projectCall, type ProjectAccess, type SessionBody } from '../../../test/e2e/support/api';
import { RtClient } from './support/rt-client';

let t: TestPlinth;
let p: ProjectAccess;
let url: string;
const clients: RtClient[] = [];

beforeAll(async () => {
  t = await startTestPlinth();
  url = await t.url();
  p = { url, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
  await enableAuth(p);
  const res = await projectCall(p, 'POST', '/collections', {
    key: p.secretKey,
    body: {
      name: 'diary',
      fields: { owner: { type: 'text' }, text: { type: 'text' }, public: { type: 'boolean' } },
      rules: { read: 'record.public == true || (auth != null && record.owner == auth.uid)' },
    },
  });
  expect(res.status).toBe(201);
  // Public records, so that a subscription asking for a snapshot takes a while to resolve.
  for (let i = 0; i < 300; i += 50) {
    const batch = Array.from({ length: 50 }, (_, j) => ({ owner: 'someone', text: `public ${i + j}`, public: true }));
    await Promise.all(batch.map(async (data) => expect((await projectCall(p, 'POST', '/collections/diary/records', { key: p.secretKey, body: { data } })).status).toBe(201)));
  }
});
afterAll(async () => {
  for (const c of clients.splice(0)) c.close();
  await t.close();
});

const RACES = 100;

it('auth → subscribe → auth: null within a few ms, 100 times: 0 events delivered after sign-out-all', async () => {
  const email = `victim-${Date.now().toString(36)}@race.example.com`;
  const session = await projectCall<SessionBody>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email, password: 'correct horse battery' } });
  expect(session.status).toBe(201);
  const victim = { id: session.body.user.id, token: session.body.access_token };

  await Promise.all(
    Array.from({ length: RACES }, async (_, i) => {
      const c = await RtClient.connect(url, p.id, { queryKey: p.publicKey });
      clients.push(c);
      c.send({ type: 'auth', token: victim.token });
      c.send({ type: 'subscribe', id: 'd', collection: 'diary', snapshot: true, limit: 1000 });
      // 0–4 ms later: sign out on this connection, while the subscription resolves (or just after).
      if (i % 5) await new Promise((r) => setTimeout(r, i % 5));
      c.send({ type: 'auth', token: null });
    }),
  );
  // Each connection has taken both `auth`s, and its subscription is live (anonymous, in the end).
  for (const c of clients) await c.next((m) => m.type === 'auth_ok' && m.user_id === null);
  for (const c of clients) await c.next((m) => m.type === 'subscribed' && m.id === 'd');
  await new Promise((r) => setTimeout(r, 500));

  const out = await projectCall(p, 'POST', '/auth/signout-all', { key: p.publicKey, userToken: victim.token });
  expect(out.status).toBe(200);
  const seen = clients.map((c) => c.messages.length);
  for (let i = 0; i < 5; i++) {
    const res = await projectCall(p, 'POST', '/collections/diary/records', { key: p.secretKey, body: { data: { owner: victim.id, text: `private ${i}` } } });
    expect(res.status).toBe(201);
  }
  // Past the revocation check (250 ms) and any delivery (milliseconds): nothing may arrive.
  await new Promise((r) => setTimeout(r, 1500));
  const delivered = clients.flatMap((c, i) => c.messages.slice(seen[i]).filter((m) => m.type === 'events'));
  expect(delivered).toEqual([]);
  // The subscriptions are alive, as anonymous ones: a public record reaches every connection, once.
  const res = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/diary/records', { key: p.secretKey, body: { data: { owner: victim.id, text: 'public', public: true } } });
  expect(res.status).toBe(201);
  for (const c of clients) expect((await c.waitForEvents('d', 1)).map((e) => e.record.id)).toEqual([res.body.record.id]);
}, 60_000);
