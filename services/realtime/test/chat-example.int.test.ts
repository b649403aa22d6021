/**
 * The chat example (examples/chat) end to end through the gateway: rules that read other records
 * (membership and author name with get()), membership changed by an atomic batch, and realtime
 * following the lookups — a removed member gets `leave` for the room, a fresh snapshot of their
 * messages without it, and nothing more from that room.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startTestPlinth, type TestPlinth } from '@plinth/testing/harness';
import { enableAuth, projectCall, type ProjectAccess, type SessionBody } from '../../../test/e2e/support/api';
import { RtClient } from './support/rt-client';

const SCHEMA = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../examples/chat/plinth.schema.json'), 'utf8')) as {
  collections: { [name: string]: { fields: object; rules: object } };
};
const PASSWORD = 'chat example password';

let t: TestPlinth;
let p: ProjectAccess;
const clients: RtClient[] = [];

interface Member {
  uid: string;
  email: string;
  token: string;
  profile: string;
}

type Rec = { id: string; version: number; [field: string]: unknown };

const secret = <T = { record: Rec }>(method: 'POST' | 'PATCH', route: string, body: unknown) => projectCall<T>(p, method, route, { key: p.secretKey, body });
const as = <T = { record: Rec }>(m: Member, method: 'GET' | 'POST', route: string, body?: unknown) =>
  projectCall<T>(p, method, route, { key: p.publicKey, dbUserToken: m.token, ...(body === undefined ? {} : { body }) });

/** Signs up, creates the profile as the user, has the server put its id in a claim, signs in again. */
async function join(label: string, name: string): Promise<Member> {
  const email = `${label}-${Math.random().toString(36).slice(2, 8)}@chat.example.com`;
  const up = await projectCall<SessionBody>(p, 'POST', '/auth/signup', { key: p.publicKey, body: { email, password: PASSWORD } });
  expect(up.status).toBe(201);
  const uid = up.body.user.id;
  const created = await projectCall<{ record: Rec }>(p, 'POST', '/collections/profiles/records', { key: p.publicKey, dbUserToken: up.body.access_token, body: { data: { uid, name } } });
  expect(created.status).toBe(201);
  expect((await secret('PATCH', `/auth/users/${uid}`, { claims: { profile: created.body.record.id } })).status).toBe(200);
  const signIn = await projectCall<SessionBody>(p, 'POST', '/auth/signin', { key: p.publicKey, body: { email, password: PASSWORD } });
  expect(signIn.status).toBe(200);
  return { uid, email, token: signIn.body.access_token, profile: created.body.record.id };
}

async function connect(m: Member): Promise<RtClient> {
  const c = await RtClient.connect(p.url, p.id, { queryKey: p.publicKey });
  clients.push(c);
  c.send({ type: 'auth', token: m.token });
  await c.next((msg) => msg.type === 'auth_ok');
  return c;
}

let alice: Member;
let bob: Member;
let roomA: Rec;
let roomB: Rec;

beforeAll(async () => {
  t = await startTestPlinth();
  const url = await t.url();
  p = { url, id: t.project.id, publicKey: t.project.publicKey, secretKey: t.project.secretKey };
  await enableAuth(p);
  for (const [name, def] of Object.entries(SCHEMA.collections)) {
    expect((await secret('POST', '/collections', { name, ...def })).status).toBe(201);
  }
  alice = await join('alice', 'Alice');
  bob = await join('bob', 'Bob');
  const both = [alice.uid, bob.uid];
  const setup = await secret<{ results: Array<{ record: Rec }> }>('POST', '/batch', {
    operations: [
      { op: 'create', collection: 'rooms', data: { name: 'A', owner: alice.uid, members: both } },
      { op: 'create', collection: 'rooms', data: { name: 'B', owner: alice.uid, members: both } },
    ],
  });
  expect(setup.status).toBe(200);
  [roomA, roomB] = setup.body.results.map((r) => r.record) as [Rec, Rec];
  const rooms = [roomA.id, roomB.id];
  const profiles = await secret('POST', '/batch', {
    operations: [alice, bob].map((m) => ({ op: 'update', collection: 'profiles', id: m.profile, data: { rooms } })),
  });
  expect(profiles.status).toBe(200);
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(() => t.close());

const post = (m: Member, room: Rec, body: string, authorName = m === alice ? 'Alice' : 'Bob') =>
  as(m, 'POST', '/collections/messages/records', { data: { room: room.id, author: m.uid, author_name: authorName, body } });

describe('the chat example', () => {
  it('members write as themselves under their profile name; others and impostors are refused', async () => {
    expect((await post(alice, roomA, 'hello')).status).toBe(201);
    expect((await post(bob, roomA, 'I am Alice', 'Alice')).status).toBe(403);
    const outsider = await join('eve', 'Eve');
    expect((await post(outsider, roomA, 'let me in')).status).toBe(403);
    // Eve has no rooms: her messages read rule resolves to nothing at all.
    expect((await as(outsider, 'GET', '/collections/messages/records')).status).toBe(403);
    const listed = await as<{ records: Rec[] }>(bob, 'GET', '/collections/messages/records');
    expect(listed.body.records.map((r) => r.body)).toContain('hello');
  });

  it('removing a member (one batch) gives them leave for the room, a snapshot without its messages, and nothing more from it', async () => {
    const c = await connect(bob);
    expect(await c.subscribe('rooms', { collection: 'rooms' })).toMatchObject({ type: 'subscribed' });
    expect(await c.subscribe('msgs', { collection: 'messages', snapshot: true })).toMatchObject({ type: 'subscribed' });
    expect((await post(alice, roomA, 'before')).status).toBe(201);
    await c.next((m) => m.type === 'events' && m.id === 'msgs' && JSON.stringify(m).includes('"before"'));

    const removed = await secret('POST', '/batch', {
      operations: [
        { op: 'update', collection: 'rooms', id: roomA.id, data: { members: [alice.uid] } },
        { op: 'update', collection: 'profiles', id: bob.profile, data: { rooms: [roomB.id] } },
      ],
    });
    expect(removed.status).toBe(200);
    const left = await c.next((m) => m.type === 'events' && m.id === 'rooms');
    expect(left).toMatchObject({ events: [{ kind: 'leave', record: { id: roomA.id, version: roomA.version + 1 } }] });
    expect(Object.keys((left as unknown as { events: Array<{ record: object }> }).events[0]!.record).sort()).toEqual(['id', 'version']);
    await c.next((m) => m.type === 'resync_required' && m.id === 'msgs' && m.reason === 'lookup_changed');
    const snapshot = await c.next((m) => m.type === 'snapshot' && m.id === 'msgs' && c.messages.indexOf(m) > c.messages.findIndex((x) => x.type === 'resync_required'));
    expect((snapshot as unknown as { records: Rec[] }).records.every((r) => r.room === roomB.id)).toBe(true);

    // Room A goes on without Bob: he is refused there, and receives nothing from it.
    expect((await post(bob, roomA, 'still here?')).status).toBe(403);
    expect((await post(alice, roomA, 'after (A)')).status).toBe(201);
    expect((await post(alice, roomB, 'after (B)')).status).toBe(201);
    await c.next((m) => m.type === 'events' && m.id === 'msgs' && JSON.stringify(m).includes('after (B)'));
    expect(JSON.stringify(c.messages)).not.toContain('after (A)');
  });
});
