/**
 * Full-text search (docs/records.md "Full-text search"): the `searchable` field option and the
 * `search` query parameter. A search is reduced to at most MAX_SEARCH_TERMS words — runs of
 * letters, digits and combining marks — each at most MAX_TERM_LENGTH characters; everything
 * else in the parameter (quotes, `*`, `-`, `NEAR`, `:`, parentheses) only separates words. The
 * stores quote each word as a phrase of its own, so user input is never search query syntax
 * (FTS5's or MongoDB's `$text`), and every word must occur (AND).
 */
import { InvalidRequestError, type Collection, type FieldDefinition, type FieldType } from '@plinth/shared';

/** Longest `search` parameter, in characters. */
export const MAX_SEARCH_LENGTH = 256;
export const MAX_SEARCH_TERMS = 8;
export const MAX_TERM_LENGTH = 64;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/** `searchable` of a field definition: only `true` is kept (the answer shows it only when set). */
export function parseSearchable(field: string, type: FieldType, v: unknown): Pick<FieldDefinition, 'searchable'> {
  if (v === undefined || v === false) return {};
  if (v !== true) throw new InvalidRequestError(`"searchable" of field "${field}" must be a boolean.`, { field, key: 'searchable' });
  if (type !== 'text') throw new InvalidRequestError(`Field "${field}" of type ${type} cannot be searchable: only text fields can.`, { field, key: 'searchable' });
  return { searchable: true };
}

/** The collection's searchable fields, in definition order. */
export function searchableFields(collection: Pick<Collection, 'fields'>): string[] {
  return Object.entries(collection.fields)
    .filter(([, def]) => def.searchable === true && def.type === 'text')
    .map(([field]) => field);
}

function bad(message: string, details: { [k: string]: unknown } = {}): InvalidRequestError {
  return new InvalidRequestError(message, { parameter: 'search', ...details });
}

/** The words of a `search` parameter (undefined when absent); 400 naming `search` when unusable. */
export function parseSearch(collection: Collection, raw: unknown): string[] | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw bad('"search" must be given once.');
  if (searchableFields(collection).length === 0) {
    throw bad(`Collection "${collection.name}" has no searchable field: mark text fields "searchable": true to search them.`);
  }
  if (raw.length > MAX_SEARCH_LENGTH) throw bad(`"search" is at most ${MAX_SEARCH_LENGTH} characters.`, { max: MAX_SEARCH_LENGTH });
  const words = raw.normalize('NFC').match(WORD) ?? [];
  if (words.length === 0) throw bad('"search" has no word to search for (letters or digits).');
  if (words.length > MAX_SEARCH_TERMS) throw bad(`"search" has at most ${MAX_SEARCH_TERMS} words.`, { max: MAX_SEARCH_TERMS });
  const long = words.find((w) => w.length > MAX_TERM_LENGTH);
  if (long !== undefined) throw bad(`A word of "search" is at most ${MAX_TERM_LENGTH} characters.`, { max: MAX_TERM_LENGTH });
  return [...new Set(words.map((w) => w.toLowerCase()))];
}
