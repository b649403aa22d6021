/**
 * Schema files with relation fields: `plinth pull` writes a relation's options without the ones
 * the project fills in by default, `plinth apply` sees a file that leaves them out as unchanged,
 * and creates the collections relations point at before the collections that point at them.
 */
import { compact, sameField, type FieldDef } from '../../clients/cli/src/commands/schema';
import { orderByRelations } from '../../clients/cli/src/commands/relation-order';

const live: FieldDef = { type: 'relation', required: false, unique: false, indexed: false, collection: 'users', max_items: 1, on_delete: 'restrict', readable_by_writer: false };

describe('schema files with relation fields', () => {
  it('pull writes the relation options that differ from the defaults', () => {
    expect(compact(live)).toEqual({ type: 'relation', collection: 'users' });
    expect(compact({ ...live, max_items: 5, on_delete: 'cascade', readable_by_writer: true })).toEqual({
      type: 'relation',
      collection: 'users',
      max_items: 5,
      on_delete: 'cascade',
      readable_by_writer: true,
    });
  });

  it('a file without the defaults is the same field; another option value is a change', () => {
    expect(sameField({ type: 'relation', collection: 'users' }, live)).toBe(true);
    expect(sameField({ type: 'relation', collection: 'users', on_delete: 'cascade' }, live)).toBe(false);
    expect(sameField({ type: 'relation', collection: 'teams' }, live)).toBe(false);
  });

  it('apply creates a relation target before the collections pointing at it, keeping the file order otherwise', () => {
    const step = (method: 'POST' | 'PATCH' | 'DELETE', collection: string, fields: object = {}) => ({ method, collection, body: { name: collection, fields } });
    const comments = step('POST', 'comments', { post: { type: 'relation', collection: 'posts' } });
    const posts = step('POST', 'posts', { author: { type: 'relation', collection: 'users' }, parent: { type: 'relation', collection: 'posts' } });
    const users = step('POST', 'users');
    const notes = step('PATCH', 'notes', { owner: { type: 'relation', collection: 'users' } });
    const old = step('DELETE', 'old');
    expect(orderByRelations([old, comments, notes, posts, users]).map((s) => s.collection)).toEqual(['old', 'users', 'posts', 'comments', 'notes']);
  });
});
