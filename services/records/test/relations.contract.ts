/**
 * Relation fields against every RecordStore adapter, through the record operations: definitions
 * (every option, normalized), values on write (single, list, null, missing, targets that exist
 * or are readable), `where` on relation fields, and each `on_delete` — restrict, cascade (rules
 * of every cascaded record, the cascade limit), set_null (single and list) — with the same
 * answers, stored records and published events on every adapter.
 */
import type { RecordDoc } from '@plinth/shared';
import type { DeletePlan, RecordStore } from '../src/store/record-store';
import { MAX_CASCADE_RECORDS } from '../src/operations/relation-deletes';
import { P, SECRET, relationsHarness, userCaller, type RelationsHarness } from './relations-fixture';

const ALICE = userCaller('alice');

export function describeRelationsContract(name: string, makeStore: () => Promise<RecordStore>): void {
  describe(`relations: ${name}`, () => {
    let h: RelationsHarness;
    beforeEach(async () => {
      h = relationsHarness(await makeStore());
      await h.define('users', { name: { type: 'text' } }, { read: 'true', delete: 'true' });
    });
    afterEach(() => h.store.close());

    it('a relation definition is stored with every option filled in', async () => {
      await h.define('posts', {
        author: { type: 'relation', collection: 'users' },
        editors: { type: 'relation', collection: 'users', max_items: 5, on_delete: 'set_null', readable_by_writer: true },
        parent: { type: 'relation', collection: 'posts', on_delete: 'cascade', indexed: true },
      });
      const posts = await h.collections.load(P, 'posts');
      expect(posts.fields).toEqual({
        author: { type: 'relation', required: false, unique: false, indexed: false, collection: 'users', max_items: 1, on_delete: 'restrict', readable_by_writer: false },
        editors: { type: 'relation', required: false, unique: false, indexed: false, collection: 'users', max_items: 5, on_delete: 'set_null', readable_by_writer: true },
        parent: { type: 'relation', required: false, unique: false, indexed: true, collection: 'posts', max_items: 1, on_delete: 'cascade', readable_by_writer: false },
      });
    });

    it.each([
      [{ type: 'relation' }, 'collection'],
      [{ type: 'relation', collection: 'nope' }, 'collection'],
      [{ type: 'relation', collection: 'users', max_items: 0 }, 'max_items'],
      [{ type: 'relation', collection: 'users', max_items: 101 }, 'max_items'],
      [{ type: 'relation', collection: 'users', on_delete: 'ignore' }, 'on_delete'],
      [{ type: 'relation', collection: 'users', on_delete: 'set_null', required: true }, 'on_delete'],
      [{ type: 'relation', collection: 'users', readable_by_writer: 'yes' }, 'readable_by_writer'],
      [{ type: 'text', collection: 'users' }, 'collection'],
      [{ type: 'relation', collection: 'users', max_items: 3, indexed: true }, 'indexed'],
    ])('a bad relation definition %j is a 400 naming %s', async (def, key) => {
      await expect(h.define('posts', { author: def })).rejects.toMatchObject({ status: 400, details: { field: 'author', key } });
      expect(await h.store.getCollection(P, 'posts')).toBeNull();
    });

    it('a relation keeps its target and its single-or-list shape; on_delete may change', async () => {
      await h.define('posts', { author: { type: 'relation', collection: 'users' } });
      await h.define('teams', {});
      await expect(h.collections.update(SECRET, 'posts', { fields: { author: { type: 'relation', collection: 'teams' } } })).rejects.toMatchObject({
        status: 400,
        details: { field: 'author', key: 'collection' },
      });
      await expect(h.collections.update(SECRET, 'posts', { fields: { author: { type: 'relation', collection: 'users', max_items: 2 } } })).rejects.toMatchObject({
        status: 400,
        details: { field: 'author', key: 'max_items' },
      });
      const next = await h.collections.update(SECRET, 'posts', { fields: { author: { type: 'relation', collection: 'users', on_delete: 'cascade' } } });
      expect(next.fields.author?.on_delete).toBe('cascade');
    });

    it('stores single ids, lists of ids, and nothing for null or a missing field', async () => {
      await h.define('posts', {
        author: { type: 'relation', collection: 'users' },
        editors: { type: 'relation', collection: 'users', max_items: 3 },
      });
      const [a, b] = [await h.add('users', { name: 'a' }), await h.add('users', { name: 'b' })];
      const full = await h.add('posts', { author: a.id, editors: [b.id, a.id] });
      const nulls = await h.add('posts', { author: null, editors: null });
      const missing = await h.add('posts', {});
      const empty = await h.add('posts', { editors: [] });
      expect([full.author, full.editors]).toEqual([a.id, [b.id, a.id]]);
      expect([nulls, missing].map((r) => ['author' in r, 'editors' in r])).toEqual([[false, false], [false, false]]);
      expect(empty.editors).toEqual([]);
      const cleared = await h.records.update(SECRET, 'posts', full.id, { data: { author: null } });
      expect('author' in cleared).toBe(false);
    });

    it.each([
      [{ author: 'rec_00000000000000000000000000' }, 'author'],
      [{ author: 'not-an-id' }, 'author'],
      [{ author: 42 }, 'author'],
      [{ author: ['rec_00000000000000000000000000'] }, 'author'],
      [{ editors: 'rec_00000000000000000000000000' }, 'editors'],
    ])('a bad relation value %j is a 400 naming %s', async (data, field) => {
      await h.define('posts', { author: { type: 'relation', collection: 'users' }, editors: { type: 'relation', collection: 'users', max_items: 2 } });
      await expect(h.add('posts', data)).rejects.toMatchObject({ status: 400, details: { field } });
      expect(await h.all('posts')).toEqual([]);
    });

    it('a list relation refuses more than max_items ids, a repeated id and an id that does not exist', async () => {
      await h.define('posts', { editors: { type: 'relation', collection: 'users', max_items: 2 } });
      const [a, b, c] = [await h.add('users', {}), await h.add('users', {}), await h.add('users', {})];
      await expect(h.add('posts', { editors: [a.id, b.id, c.id] })).rejects.toMatchObject({ status: 400, details: { field: 'editors', limit: 2 } });
      await expect(h.add('posts', { editors: [a.id, a.id] })).rejects.toMatchObject({ status: 400, details: { field: 'editors' } });
      const ghost = 'rec_00000000000000000000000000';
      await expect(h.add('posts', { editors: [a.id, ghost] })).rejects.toMatchObject({ status: 400, details: { field: 'editors', id: ghost } });
      const post = await h.add('posts', { editors: [a.id] });
      await expect(h.records.update(SECRET, 'posts', post.id, { data: { editors: [ghost] } })).rejects.toMatchObject({ status: 400, details: { id: ghost } });
      expect((await h.all('posts')).map((r) => r.editors)).toEqual([[a.id]]);
    });

    it('readable_by_writer: a target the writer cannot read is refused like a missing one; without it the write passes', async () => {
      await h.define('secrets', { owner: { type: 'text' } }, { read: 'record.owner == auth.uid' });
      await h.define('notes', {
        checked: { type: 'relation', collection: 'secrets', readable_by_writer: true },
        unchecked: { type: 'relation', collection: 'secrets' },
      }, { create: 'auth != null', read: 'true' });
      const mine = await h.add('secrets', { owner: 'alice' });
      const theirs = await h.add('secrets', { owner: 'bob' });
      expect((await h.add('notes', { checked: mine.id }, ALICE)).checked).toBe(mine.id);
      await expect(h.add('notes', { checked: theirs.id }, ALICE)).rejects.toMatchObject({ status: 400, details: { field: 'checked', id: theirs.id } });
      expect((await h.add('notes', { unchecked: theirs.id }, ALICE)).unchecked).toBe(theirs.id);
      // The secret key reads everything.
      expect((await h.add('notes', { checked: theirs.id })).checked).toBe(theirs.id);
    });

    it('where on a single relation is an id comparison, on a list an array-contains', async () => {
      await h.define('posts', { author: { type: 'relation', collection: 'users', indexed: true }, editors: { type: 'relation', collection: 'users', max_items: 3 } });
      const [a, b] = [await h.add('users', {}), await h.add('users', {})];
      const p1 = await h.add('posts', { author: a.id, editors: [a.id, b.id] });
      const p2 = await h.add('posts', { author: b.id, editors: [b.id] });
      const p3 = await h.add('posts', {});
      const ids = async (where: unknown): Promise<string[]> =>
        (await h.records.query(SECRET, 'posts', { where: JSON.stringify(where), orderBy: 'id' })).records.map((r) => r.id);
      expect(await ids([['author', '==', a.id]])).toEqual([p1.id]);
      expect(await ids([['author', '==', null]])).toEqual([p3.id]);
      expect(await ids([['author', 'in', [a.id, b.id]]])).toEqual([p1.id, p2.id].sort());
      expect(await ids([['editors', 'array-contains', b.id]])).toEqual([p1.id, p2.id].sort());
      await expect(ids([['editors', '==', a.id]])).rejects.toMatchObject({ status: 400 });
    });

    it('on_delete restrict: 409 naming the referencing collection, nothing deleted', async () => {
      await h.define('posts', { author: { type: 'relation', collection: 'users' } });
      const a = await h.add('users', {});
      await h.add('posts', { author: a.id });
      await expect(h.records.delete(SECRET, 'users', a.id, undefined)).rejects.toMatchObject({
        status: 409,
        details: { reason: 'restricted', collection: 'posts', field: 'author' },
      });
      expect(await h.all('users')).toHaveLength(1);
      // A record nobody points at is deleted as before.
      const b = await h.add('users', {});
      await h.records.delete(SECRET, 'users', b.id, undefined);
      expect((await h.all('users')).map((u) => u.id)).toEqual([a.id]);
    });

    it('on_delete cascade deletes the referencing records, two levels down, and publishes each delete', async () => {
      await h.define('posts', { author: { type: 'relation', collection: 'users', on_delete: 'cascade' } }, { delete: 'true', read: 'true' });
      await h.define('comments', { post: { type: 'relation', collection: 'posts', on_delete: 'cascade' }, other: { type: 'relation', collection: 'users', max_items: 2, on_delete: 'cascade' } }, { delete: 'true' });
      const [a, b] = [await h.add('users', {}), await h.add('users', {})];
      const p1 = await h.add('posts', { author: a.id });
      const p2 = await h.add('posts', { author: b.id });
      const c1 = await h.add('comments', { post: p1.id });
      const c2 = await h.add('comments', { post: p2.id, other: [b.id, a.id] });
      const c3 = await h.add('comments', { post: p2.id });
      h.events.length = 0;
      await h.records.delete(userCaller('anyone'), 'users', a.id, undefined);
      expect((await h.all('users')).map((r) => r.id)).toEqual([b.id]);
      expect((await h.all('posts')).map((r) => r.id)).toEqual([p2.id]);
      expect((await h.all('comments')).map((r) => r.id)).toEqual([c3.id]);
      const deletes = h.events.map((e) => [e.kind, e.collection, 'record' in e ? (e.record as RecordDoc).id : null]);
      expect(deletes.sort()).toEqual(
        [['delete', 'users', a.id], ['delete', 'posts', p1.id], ['delete', 'comments', c1.id], ['delete', 'comments', c2.id]].sort(),
      );
    });

    it('on_delete cascade under a delete rule that refuses one cascaded record: 403, nothing deleted or published', async () => {
      await h.define('posts', { author: { type: 'relation', collection: 'users', on_delete: 'cascade' }, locked: { type: 'boolean' } }, { delete: 'record.locked != true', read: 'true' });
      const a = await h.add('users', {});
      await h.add('posts', { author: a.id });
      await h.add('posts', { author: a.id, locked: true });
      h.events.length = 0;
      await expect(h.records.delete(ALICE, 'users', a.id, undefined)).rejects.toMatchObject({ status: 403 });
      expect(await h.all('users')).toHaveLength(1);
      expect(await h.all('posts')).toHaveLength(2);
      expect(h.events).toEqual([]);
      // The secret key bypasses rules: the cascade goes through.
      await h.records.delete(SECRET, 'users', a.id, undefined);
      expect(await h.all('posts')).toEqual([]);
    });

    it(`on_delete cascade past ${MAX_CASCADE_RECORDS} records is a 409 that deletes nothing`, async () => {
      await h.define('posts', { author: { type: 'relation', collection: 'users', on_delete: 'cascade' } });
      const a = await h.add('users', {});
      for (let i = 0; i <= MAX_CASCADE_RECORDS; i++) await h.add('posts', { author: a.id });
      await expect(h.records.delete(SECRET, 'users', a.id, undefined)).rejects.toMatchObject({ status: 409, details: { reason: 'cascade_limit', limit: MAX_CASCADE_RECORDS } });
      expect(await h.all('users')).toHaveLength(1);
      expect(await h.records.query(SECRET, 'posts', { limit: '1000' })).toMatchObject({ records: { length: MAX_CASCADE_RECORDS + 1 } });
    });

    it('on_delete set_null removes a single reference and the id from a list, with new versions and update events', async () => {
      await h.define('posts', {
        author: { type: 'relation', collection: 'users', on_delete: 'set_null' },
        editors: { type: 'relation', collection: 'users', max_items: 3, on_delete: 'set_null' },
        title: { type: 'text' },
      });
      const [a, b] = [await h.add('users', {}), await h.add('users', {})];
      const p1 = await h.add('posts', { author: a.id, editors: [a.id, b.id], title: 'one' });
      const p2 = await h.add('posts', { editors: [a.id] });
      const p3 = await h.add('posts', { author: b.id });
      h.events.length = 0;
      await h.records.delete(SECRET, 'users', a.id, undefined);
      const after = await h.all('posts');
      const byId = new Map(after.map((r) => [r.id, r]));
      expect(byId.get(p1.id)).toMatchObject({ version: 2, editors: [b.id], title: 'one' });
      expect('author' in (byId.get(p1.id) as RecordDoc)).toBe(false);
      expect(byId.get(p2.id)).toMatchObject({ version: 2, editors: [] });
      expect(byId.get(p3.id)).toEqual(p3);
      const kinds = h.events.map((e) => [e.kind, e.collection, 'record' in e ? (e.record as RecordDoc).id : null]);
      expect(kinds.sort()).toEqual([['delete', 'users', a.id], ['update', 'posts', p1.id], ['update', 'posts', p2.id]].sort());
    });

    it('a self relation: deleting a record that points at itself, and a chain through the same collection', async () => {
      await h.define('nodes', { parent: { type: 'relation', collection: 'nodes', on_delete: 'cascade' } });
      const root = await h.add('nodes', {});
      const child = await h.add('nodes', { parent: root.id });
      await h.add('nodes', { parent: child.id });
      await h.records.delete(SECRET, 'nodes', root.id, undefined);
      expect(await h.all('nodes')).toEqual([]);
    });

    it('a delete plan whose guard or version no longer holds writes nothing and answers false', async () => {
      await h.define('posts', { author: { type: 'relation', collection: 'users', on_delete: 'cascade' }, editors: { type: 'relation', collection: 'users', max_items: 2 } });
      const a = await h.add('users', {});
      const p1 = await h.add('posts', { author: a.id });
      const p2 = await h.add('posts', { editors: [a.id] });
      const users = await h.collections.load(P, 'users');
      const posts = await h.collections.load(P, 'posts');
      const base: DeletePlan = {
        deletes: [{ collection: users, id: a.id, version: 1 }, { collection: posts, id: p1.id, version: 1 }],
        replaces: [],
        guards: [{ ref: { collection: posts, field: 'author' }, targets: [a.id], referencing: [p1.id] }],
      };
      // Another post points at the user through the list: the guard sees it.
      const listGuard = { ref: { collection: posts, field: 'editors' }, targets: [a.id], referencing: [] };
      expect(await h.store.applyDeletePlan(P, { ...base, guards: [...base.guards, listGuard] })).toBe(false);
      // A version that moved.
      const moved = { ...base, deletes: [base.deletes[0]!, { collection: posts, id: p1.id, version: 7 }] };
      expect(await h.store.applyDeletePlan(P, moved)).toBe(false);
      expect((await h.all('users')).map((r) => r.id)).toEqual([a.id]);
      expect((await h.all('posts')).map((r) => r.id).sort()).toEqual([p1.id, p2.id].sort());
      const fixed = { ...base, guards: [...base.guards, { ...listGuard, referencing: [p2.id] }] };
      expect(await h.store.applyDeletePlan(P, fixed)).toBe(true);
      expect((await h.all('posts')).map((r) => r.id)).toEqual([p2.id]);
    });
  });
}
