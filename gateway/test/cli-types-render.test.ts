/**
 * What `plinth types` writes for definitions a live server may not produce today: field types
 * this CLI predates, a list with a declared item type, names that collide or need quoting.
 */
import { renderTypes } from '../../clients/cli/src/commands/types';

describe('plinth types: the generated text', () => {
  it('types each field by its type, optional unless required, after the system fields', () => {
    const text = renderTypes('shop', [
      {
        name: 'orders',
        fields: {
          ref: { type: 'text', required: true },
          total: { type: 'number' },
          count: { type: 'integer', required: true },
          paid: { type: 'boolean' },
          at: { type: 'timestamp' },
          extra: { type: 'json' },
          labels: { type: 'list' },
        },
      },
    ]);
    expect(text).toContain(
      [
        '/** A record of "orders". */',
        'export interface OrdersRecord {',
        '  id: string;',
        '  version: number;',
        '  created_at: string;',
        '  updated_at: string;',
        '  ref: string;',
        '  total?: number;',
        '  count: number;',
        '  paid?: boolean;',
        '  at?: string;',
        '  extra?: JsonValue;',
        '  labels?: Array<string | number | boolean>;',
        '}',
      ].join('\n'),
    );
    expect(text).toContain('export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };');
    expect(text).toContain('Plinth project "shop"');
  });

  it('types relations as record ids, file fields as file metadata, and unknown field types as unknown', () => {
    const text = renderTypes('shop', [
      {
        name: 'posts',
        fields: {
          cover: { type: 'file' },
          attachments: { type: 'files', max_items: 5 },
          author: { type: 'relation', collection: 'users', required: true },
          tags: { type: 'relation', collection: 'tags', max_items: 10 },
          shape: { type: 'geo' },
          ids: { type: 'list', items: { type: 'integer' } },
        },
      },
    ]);
    expect(text).toContain('  cover?: FileMeta;\n  attachments?: FileMeta[];\n');
    expect(text).toContain('  author: RecordId; // → "users"\n  tags?: RecordId[]; // → "tags"\n');
    expect(text).toContain('  shape?: unknown; // "geo": a field type this version of plinth does not know\n');
    expect(text).toContain('  ids?: Array<number>;\n');
    expect(text).toContain('export type RecordId = string;');
    const meta = /export interface FileMeta \{([\s\S]*?)\n\}/.exec(text)?.[1] ?? '';
    expect(meta.split('\n').filter((l) => !l.trim().startsWith('/**'))).toEqual(['', '  name: string;', '  original_name: string;', '  size: number;', '  type: string;', '  sha256: string;', '  created_at: string;']);
  });

  it('names interfaces apart and writes the same text for the same collections in any order', () => {
    const a = { name: 'a_1', fields: {} };
    const b = { name: 'a1', fields: {} };
    const collections = { name: 'collections', fields: {} };
    const text = renderTypes('p', [b, collections, a]);
    expect(text).toContain('export interface Collections {\n  a1: A1Record;\n  a_1: A1Record2;\n  collections: CollectionsRecord;\n}');
    expect(renderTypes('p', [a, b, collections])).toBe(text);
  });
});
