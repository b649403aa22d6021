/**
 * What `plinth types` writes for definitions a live server may not produce today: field types
 * this CLI predates, a list with a declared item type, names that collide or need quoting.
 */
import { renderTypes } from '../src/cli/commands/types';

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

  it('maps field types it does not know (file, relation) to unknown instead of failing', () => {
    const text = renderTypes('shop', [
      { name: 'posts', fields: { cover: { type: 'file' }, author: { type: 'relation', required: true }, ids: { type: 'list', items: { type: 'integer' } } } },
    ]);
    expect(text).toContain('  cover?: unknown; // "file": a field type this version of plinth does not know\n');
    expect(text).toContain('  author: unknown; // "relation": a field type this version of plinth does not know\n');
    expect(text).toContain('  ids?: Array<number>;\n');
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
