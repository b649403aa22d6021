/** The index limit of collection definitions (MAX_INDEXED_FIELDS), the same on every store. */
import type { FieldDefinition } from '@plinth/shared';
import { MAX_INDEXED_FIELDS, mergeFields, parseFields } from '../src/domain/collection-definition';

const indexed = (n: number, prefix = 'f'): { [f: string]: FieldDefinition } =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i + 1}`, { type: 'text', required: false, unique: i % 2 === 1, indexed: i % 2 === 0 }]));

it(`allows ${MAX_INDEXED_FIELDS} indexed or unique fields and refuses one more with 400 naming the limit`, () => {
  expect(Object.keys(parseFields({ ...indexed(MAX_INDEXED_FIELDS), plain: { type: 'text' } }))).toHaveLength(MAX_INDEXED_FIELDS + 1);
  expect(() => parseFields(indexed(MAX_INDEXED_FIELDS + 1))).toThrow(expect.objectContaining({ status: 400, details: { field: 'fields', limit: 20, indexed_fields: 21 } }));
});

it('lets a collection made before the limit with more keep them and shed some, but not add to them', () => {
  const legacy = indexed(MAX_INDEXED_FIELDS + 2);
  expect(Object.keys(mergeFields(legacy, { f1: null }).fields)).toHaveLength(MAX_INDEXED_FIELDS + 1);
  expect(Object.keys(mergeFields(legacy, { f1: null, g1: { type: 'text', indexed: true } }).fields)).toHaveLength(MAX_INDEXED_FIELDS + 2);
  expect(() => mergeFields(legacy, { g1: { type: 'text', unique: true } })).toThrow(expect.objectContaining({ status: 400 }));
  expect(() => mergeFields(indexed(MAX_INDEXED_FIELDS), { g1: { type: 'text', indexed: true } })).toThrow(expect.objectContaining({ status: 400 }));
});
