/**
 * Rules that read other records (docs/rules.md "Lookups"): get() and exists() in write and read
 * rules, null for a missing record, the per-operation limit, one store read per distinct lookup,
 * the refusal of record-dependent lookups in read rules when saved, and the simulator's trace.
 */
import { InvalidRequestError, PlinthError } from '@plinth/shared';
import { lookupService, SECRET, user } from './lookup-fixture';

let svc: ReturnType<typeof lookupService>;
let room: { id: string };

beforeEach(async () => {
  svc = lookupService();
  await svc.collections.create(SECRET, {
    name: 'rooms',
    fields: { name: { type: 'text' }, members: { type: 'list' } },
    rules: { read: 'auth.uid in record.members' },
  });
  room = await svc.create('rooms', { name: 'general', members: ['alice', 'carol'] });
});
afterEach(() => svc.close());

async function messages(rules: { [op: string]: string }, fields: object = {}) {
  await svc.collections.create(SECRET, {
    name: 'messages',
    fields: { room: { type: 'text' }, body: { type: 'text' }, ...fields },
    rules,
  });
}

async function refusal(p: Promise<unknown>): Promise<PlinthError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(PlinthError);
  return err as PlinthError;
}

describe('get() and exists() in write rules', () => {
  beforeEach(() => messages({ create: "auth.uid in get('rooms', data.room).members", read: 'true' }));

  it('a member may write into the room, anyone else is refused (403)', async () => {
    const created = await svc.records.create(user('alice'), 'messages', { data: { room: room.id, body: 'hi' } }, undefined);
    expect(created.record).toMatchObject({ room: room.id, body: 'hi' });
    const err = await refusal(svc.records.create(user('mallory'), 'messages', { data: { room: room.id, body: 'hi' } }, undefined));
    expect(err.status).toBe(403);
  });

  it('a lookup of a missing record is null: reading a field of it denies, and exists() is false', async () => {
    const err = await refusal(svc.records.create(user('alice'), 'messages', { data: { room: 'rec_missing', body: 'x' } }, undefined));
    expect(err.status).toBe(403);
    await svc.collections.update(SECRET, 'messages', {
      rules: { create: "get('rooms', data.room) == null && !exists('rooms', data.room) && !exists('nowhere', data.room)", read: 'true' },
    });
    const ok = await svc.records.create(user('alice'), 'messages', { data: { room: 'rec_missing', body: 'x' } }, undefined);
    expect(ok.record).toMatchObject({ room: 'rec_missing' });
    const taken = await refusal(svc.records.create(user('alice'), 'messages', { data: { room: room.id, body: 'x' } }, undefined));
    expect(taken.status).toBe(403);
  });

  it('get() shows the record as the API does: its fields at the top level, id and version', async () => {
    await svc.collections.update(SECRET, 'messages', {
      rules: { create: `get('rooms', data.room).id == '${room.id}' && get('rooms', data.room).version == 1 && get('rooms', data.room).name == 'general'`, read: 'true' },
    });
    await svc.records.create(user('alice'), 'messages', { data: { room: room.id } }, undefined);
  });

  it('ten identical lookups in one operation are one store read', async () => {
    const rule = Array.from({ length: 10 }, () => "auth.uid in get('rooms', data.room).members").join(' && ');
    await svc.collections.update(SECRET, 'messages', { rules: { create: rule, read: 'true' } });
    svc.reads.clear();
    await svc.records.create(user('alice'), 'messages', { data: { room: room.id } }, undefined);
    expect(svc.reads.get('rooms')).toBe(1);
  });

  it('at most 10 distinct lookups per operation: the 11th refuses the request with a message that says so', async () => {
    const ids = Array.from({ length: 11 }, (_, i) => `rec_${i}`);
    const rule = (n: number) => ids.slice(0, n).map((id) => `!exists('rooms', '${id}')`).join(' && ');
    await svc.collections.update(SECRET, 'messages', { rules: { create: rule(10), read: 'true' } });
    await svc.records.create(user('alice'), 'messages', { data: {} }, undefined);
    await svc.collections.update(SECRET, 'messages', { rules: { create: rule(11), read: 'true' } });
    svc.reads.clear();
    const err = await refusal(svc.records.create(user('alice'), 'messages', { data: {} }, undefined));
    expect(err).toMatchObject({ status: 403, code: 'forbidden', details: { reason: 'lookup_limit', limit: 10 } });
    expect(err.message).toMatch(/more than 10 other records/);
    // All 11 were asked for in the same evaluation: refused before any was read.
    expect(svc.reads.get('rooms')).toBeUndefined();
  });

  it('lookups read the stored record without its own rules (mallory cannot read the room, the rule can)', async () => {
    await svc.collections.update(SECRET, 'messages', { rules: { create: "get('rooms', data.room).name == 'general'", read: 'true' } });
    await expect(svc.records.get(user('mallory'), 'rooms', room.id)).rejects.toMatchObject({ status: 404 });
    await svc.records.create(user('mallory'), 'messages', { data: { room: room.id } }, undefined);
  });
});

describe('lookups in read rules', () => {
  it('a lookup named by auth is read once and becomes a constant of the residual', async () => {
    await svc.collections.create(SECRET, { name: 'profiles', fields: { rooms: { type: 'list' } }, rules: {} });
    const profile = await svc.create('profiles', { rooms: [room.id] });
    await messages({ read: "record.room in get('profiles', auth.token.profile).rooms" });
    await svc.create('messages', { room: room.id, body: 'in' });
    await svc.create('messages', { room: 'rec_other', body: 'out' });
    const page = await svc.records.query(user('alice', { profile: profile.id }), 'messages', {});
    expect(page.records.map((r) => r.body)).toEqual(['in']);
    const sub = await svc.records.subscribe(user('alice', { profile: profile.id }), 'messages', {});
    expect(sub.predicate).toEqual(['room', 'in', [room.id]]);
    expect(sub.lookups).toEqual([{ collection: 'profiles', id: profile.id }]);
    // No profile: the lookup is null, its field an error, and the read rule refuses everything.
    await expect(svc.records.query(user('bob'), 'messages', {})).rejects.toMatchObject({ status: 403 });
  });

  it('a lookup that depends on the record is refused when the rule is saved, naming it', async () => {
    const err = await refusal(messages({ read: "auth.uid in get('rooms', record.room).members" }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.details).toMatchObject({ field: 'rules.read', position: 12 });
    expect(err.message).toContain("get('rooms', record.room).members");
    expect(err.message).toMatch(/filter/);
    // The same lookup is fine in a write rule.
    await messages({ update: "auth.uid in get('rooms', record.room).members" });
  });

  it('calls other than get and exists, and a collection that is not a literal name, are refused', async () => {
    for (const rule of ["size(get('rooms', data.room))", "get(data.room, 'x') != null", "get('Rooms', 'x') != null", "exists('rooms', 'x').name == 1", "get('rooms') != null"]) {
      const err = await refusal(messages({ create: rule }));
      expect(err.status).toBe(400);
    }
  });
});

describe('the rule simulator shows each lookup and what it found', () => {
  it('write and read simulations list the lookups in order, with the record or null', async () => {
    await messages({ create: "auth.uid in get('rooms', data.room).members && !exists('rooms', 'rec_gone')", read: "record.room in get('rooms', auth.token.room).members" });
    const res = await svc.simulation.simulate(SECRET, 'messages', { operation: 'create', auth: { uid: 'alice' }, data: { room: room.id } });
    expect(res.allowed).toBe(true);
    expect(res.lookups).toEqual([
      { collection: 'rooms', id: room.id, result: expect.objectContaining({ id: room.id, version: 1, name: 'general', members: ['alice', 'carol'] }) },
      { collection: 'rooms', id: 'rec_gone', result: null },
    ]);
    const read = await svc.simulation.simulate(SECRET, 'messages', { operation: 'read', auth: { uid: 'alice', claims: { room: room.id } } });
    expect(read).toMatchObject({ allowed: true, residual: ['room', 'in', ['alice', 'carol']] });
    expect(read.lookups).toEqual([{ collection: 'rooms', id: room.id, result: expect.objectContaining({ id: room.id }) }]);
  });
});
