/**
 * Full-text search on MongoDB (docs/records.md "Full-text search"): one text index per collection
 * over its searchable fields, and the `$text` filter and relevance sort a search sends.
 *
 * The index is named `tx:<hash of the fields>`, with `default_language: "none"` (no stemming, no
 * stop words, as the SQLite index) and a `language_override` no user field can be named (field
 * names start with a letter), so a record field called `language` never switches the language.
 * MongoDB holds one text index per collection: another set of fields drops the old one first.
 * Each word is sent as a quoted phrase of its own: all of them must occur, and nothing of the
 * user's input is `$text` syntax (words hold letters, digits and marks only).
 */
import { createHash } from 'node:crypto';
import { dropMongoIndex, listMongoIndexes, type Collection, type MongoIndexable } from '@plinth/shared';
import type { Document, Filter } from 'mongodb';
import { searchableFields } from '../../domain/search-terms';
import { fieldPath, type RecordDocument } from './mongo-filter';

const TEXT_INDEX = /^tx:/;

/** The wanted text index of `collection`, or null when no field is searchable. */
export function wantedTextIndex(collection: Pick<Collection, 'fields'>): { name: string; key: { [path: string]: 'text' } } | null {
  const fields = searchableFields(collection);
  if (fields.length === 0) return null;
  const name = `tx:${createHash('sha256').update(fields.join('\n')).digest('hex').slice(0, 16)}`;
  return { name, key: Object.fromEntries(fields.map((f) => [fieldPath(f), 'text' as const])) };
}

/** Brings the collection's text index to its searchable fields (`maxTimeMS` bounds a build). */
export async function syncTextIndex(records: MongoIndexable, collection: Pick<Collection, 'fields'>, maxTimeMS: number): Promise<void> {
  const wanted = wantedTextIndex(collection);
  let present = false;
  for (const existing of await listMongoIndexes(records)) {
    const name = existing.name as string;
    if (!TEXT_INDEX.test(name)) continue;
    if (name === wanted?.name) present = true;
    else await dropMongoIndex(records, name);
  }
  if (!wanted || present) return;
  await records.createIndexes(
    [{ key: wanted.key, name: wanted.name, default_language: 'none', language_override: '_plinth_language' }],
    { maxTimeMS: Math.max(1, maxTimeMS), commitQuorum: 'majority' },
  );
}

/** `$search` of the words: each a quoted phrase, so every one must occur. */
export function textSearchString(words: readonly string[]): string {
  return words.map((w) => `"${w.replaceAll('"', '')}"`).join(' ');
}

/** `filter` restricted to the search's matches; `$text` stays at the top level, as the server requires. */
export function withSearch(filter: Filter<RecordDocument>, words: readonly string[] | undefined): Filter<RecordDocument> {
  if (!words) return filter;
  return { $text: { $search: textSearchString(words) }, $and: [filter] } as Filter<RecordDocument>;
}

/** Relevance order: best first, ties by id ascending. */
export const RANK_SORT: Document = { score: { $meta: 'textScore' }, _id: 1 };
