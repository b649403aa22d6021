/**
 * File fields against every RecordStore adapter (docs/files.md "Fields"): a definition with
 * `file` and `files` fields and all their options is read back as saved, and a record's file
 * metadata (one file, a list of files) round-trips through insert, get, query and replace.
 */
import { asProjectId, type Collection, type RecordDoc } from '@plinth/shared';
import type { RecordStore } from '../src/store/record-store';

const P = asProjectId('proj-files');
const T0 = '2026-01-01T00:00:00.000Z';
const POSTS: Collection = {
  name: 'posts',
  fields: {
    title: { type: 'text', required: false, unique: false, indexed: false },
    cover: { type: 'file', required: false, unique: false, indexed: false, max_size: 5242880, mime_types: ['image/png', 'image/*'], max_items: 1, thumbs: ['100x100', '0x300', '100x100f'] },
    attachments: { type: 'files', required: false, unique: false, indexed: false, max_size: 1024, mime_types: [], max_items: 5, thumbs: [] },
  },
  rules: { create: 'data.cover.size < 1000 && data.cover.type == "image/png"' },
  revision: 1,
  created_at: T0,
  updated_at: T0,
};

const meta = (name: string, size: number, type: string) => ({ name, original_name: `Orig ${name}`, size, type, sha256: 'a'.repeat(64), created_at: T0 });

export function describeFileFieldsContract(name: string, makeStore: () => Promise<RecordStore>): void {
  describe(`RecordStore file fields: ${name}`, () => {
    let store: RecordStore;
    beforeEach(async () => {
      store = await makeStore();
      await store.createCollection(P, POSTS);
    });
    afterEach(() => store.close());

    it('a definition with file and files fields is read back as saved', async () => {
      expect(await store.getCollection(P, 'posts')).toEqual(POSTS);
    });

    it('a record holding file metadata round-trips through insert, get, query and replace', async () => {
      const r: RecordDoc = { id: 'rec_1', version: 1, created_at: T0, updated_at: T0, title: 'x', cover: meta('beach_aaaaaaaaaa.png', 812, 'image/png'), attachments: [meta('a_bbbbbbbbbb.txt', 3, 'text/plain'), meta('b_cccccccccc.pdf', 9, 'application/pdf')] };
      await store.insertRecord(P, POSTS, r);
      expect(await store.getRecord(P, POSTS, 'rec_1')).toEqual(r);
      expect(await store.queryRecords(P, POSTS, { predicate: true, orderBy: 'id', direction: 'asc', limit: 10 })).toEqual([r]);
      const next: RecordDoc = { ...r, version: 2, attachments: [meta('b_cccccccccc.pdf', 9, 'application/pdf')] };
      delete next.cover;
      expect(await store.replaceRecord(P, POSTS, next, 1)).toBeTruthy();
      expect(await store.getRecord(P, POSTS, 'rec_1')).toEqual(next);
    });
  });
}
