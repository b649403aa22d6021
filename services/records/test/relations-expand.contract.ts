/**
 * `expand` against every RecordStore adapter: single and list relations, two levels, nulls,
 * missing fields and ids whose record is gone, on get, list and subscribe snapshots; every
 * expanded record passes its own read rule (a hidden one is left out), each relation of a page
 * is one store query, and a bad `expand` is a 400 naming the field.
 */
import type { RecordDoc } from '@plinth/shared';
import type { RecordQuery, RecordStore } from '../src/store/record-store';
import { P, SECRET, relationsHarness, userCaller, type RelationsHarness } from './relations-fixture';

const ALICE = userCaller('alice');
const plain = (r: RecordDoc): RecordDoc => r;

export function describeRelationsExpandContract(name: string, makeStore: () => Promise<RecordStore>): void {
  describe(`relations expand: ${name}`, () => {
    let h: RelationsHarness;
    let users: RecordDoc[];
    beforeEach(async () => {
      h = relationsHarness(await makeStore());
      await h.define('users', { name: { type: 'text' }, hidden: { type: 'boolean' } }, { read: 'record.hidden != true' });
      await h.define('posts', {
        title: { type: 'text' },
        author: { type: 'relation', collection: 'users' },
        editors: { type: 'relation', collection: 'users', max_items: 5 },
      }, { read: 'true' });
      await h.define('comments', { body: { type: 'text' }, post: { type: 'relation', collection: 'posts' } }, { read: 'true' });
      users = [await h.add('users', { name: 'ann' }), await h.add('users', { name: 'bob' }), await h.add('users', { name: 'cy', hidden: true })];
    });
    afterEach(() => h.store.close());

    it('get: a single relation becomes the record, a list an array in the list order', async () => {
      const [ann, bob] = users as [RecordDoc, RecordDoc];
      const post = await h.add('posts', { title: 't', author: ann.id, editors: [bob.id, ann.id] });
      const got = await h.records.get(ALICE, 'posts', post.id, { expand: 'author,editors' });
      expect(got).toEqual({ ...post, expand: { author: plain(ann), editors: [bob, ann] } });
      // Without expand the record is as stored.
      expect(await h.records.get(ALICE, 'posts', post.id)).toEqual(post);
    });

    it('nulls, missing fields, empty lists and ids whose record is gone expand to nothing', async () => {
      const [ann] = users as [RecordDoc];
      const gone = await h.add('users', { name: 'gone' });
      const p1 = await h.add('posts', { title: 'missing' });
      const p2 = await h.add('posts', { title: 'nulls', author: null, editors: [] });
      const p3 = await h.add('posts', { title: 'dangling', author: gone.id, editors: [gone.id, ann.id] });
      // Removed behind the relations' back (the store alone), so the ids dangle.
      await h.store.deleteRecord(P, await h.collections.load(P, 'users'), gone.id);
      const page = await h.records.query(ALICE, 'posts', { orderBy: 'id', expand: 'author,editors' });
      const byId = new Map(page.records.map((r) => [r.id, r.expand]));
      expect(byId.get(p1.id)).toEqual({});
      expect(byId.get(p2.id)).toEqual({ editors: [] });
      expect(byId.get(p3.id)).toEqual({ editors: [ann] });
    });

    it('a record the caller cannot read is left out, single or in a list; the secret key sees it', async () => {
      const [ann, , cy] = users as [RecordDoc, RecordDoc, RecordDoc];
      const post = await h.add('posts', { author: cy.id, editors: [cy.id, ann.id] });
      const seen = await h.records.get(ALICE, 'posts', post.id, { expand: 'author,editors' });
      expect(seen.expand).toEqual({ editors: [ann] });
      expect(JSON.stringify(seen)).not.toContain('"cy"');
      const listed = await h.records.query(ALICE, 'posts', { expand: 'author,editors' });
      expect(listed.records[0]?.expand).toEqual({ editors: [ann] });
      const secret = await h.records.get(SECRET, 'posts', post.id, { expand: 'author,editors' });
      expect(secret.expand).toEqual({ author: cy, editors: [cy, ann] });
    });

    it('two levels: post.author on comments, each level read-checked', async () => {
      const [ann, , cy] = users as [RecordDoc, RecordDoc, RecordDoc];
      const p1 = await h.add('posts', { title: 'a', author: ann.id });
      const p2 = await h.add('posts', { title: 'c', author: cy.id });
      const c1 = await h.add('comments', { body: 'x', post: p1.id });
      const c2 = await h.add('comments', { body: 'y', post: p2.id });
      const page = await h.records.query(ALICE, 'comments', { orderBy: 'id', expand: 'post.author' });
      const byId = new Map(page.records.map((r) => [r.id, r.expand]));
      expect(byId.get(c1.id)).toEqual({ post: { ...p1, expand: { author: ann } } });
      expect(byId.get(c2.id)).toEqual({ post: { ...p2, expand: {} } });
    });

    it('each relation of a page is one store query, however many records point', async () => {
      const [ann, bob] = users as [RecordDoc, RecordDoc];
      for (let i = 0; i < 6; i++) await h.add('posts', { author: i % 2 ? ann.id : bob.id, editors: [ann.id, bob.id] });
      const queries: RecordQuery[] = [];
      const original = h.store.queryRecords.bind(h.store);
      h.store.queryRecords = async (project, collection, query) => {
        queries.push(query);
        return original(project, collection, query);
      };
      const page = await h.records.query(ALICE, 'posts', { expand: 'author,editors' });
      expect(page.records).toHaveLength(6);
      expect(page.records.every((r) => (r.expand as { author: RecordDoc }).author.id === r.author)).toBe(true);
      // The page, then one query per relation.
      expect(queries).toHaveLength(3);
    });

    it('a subscribe snapshot carries the expanded records too', async () => {
      const [ann] = users as [RecordDoc];
      const post = await h.add('posts', { author: ann.id });
      const sub = await h.records.subscribe(ALICE, 'posts', { snapshot: true, expand: 'author' });
      expect(sub.snapshot?.records).toEqual([{ ...post, expand: { author: ann } }]);
    });

    it.each([
      ['nope', 'nope'],
      ['title', 'title'],
      ['post,nope', 'nope'],
      ['post.nope', 'nope'],
      ['post.title', 'title'],
    ])('expand=%s is a 400 naming %s', async (expand, field) => {
      await expect(h.records.query(ALICE, 'comments', { expand })).rejects.toMatchObject({ status: 400, details: { parameter: 'expand', field } });
      await expect(h.records.get(ALICE, 'comments', 'rec_00000000000000000000000000', { expand })).rejects.toMatchObject({ status: 400 });
    });

    it('more than two levels, or expand given twice, is a 400', async () => {
      await h.define('likes', { comment: { type: 'relation', collection: 'comments' } }, { read: 'true' });
      await expect(h.records.query(ALICE, 'likes', { expand: 'comment.post.author' })).rejects.toMatchObject({ status: 400, details: { parameter: 'expand' } });
      await expect(h.records.query(ALICE, 'likes', { expand: ['comment', 'comment'] })).rejects.toMatchObject({ status: 400, details: { parameter: 'expand' } });
    });
  });
}
