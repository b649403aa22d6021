/**
 * `$text` for the mingo stand-in (mingo-db.ts), which mingo does not evaluate: what the records
 * MongoDB adapter sends for a full-text search, answered as a server with a text index of
 * `default_language: "none"` answers it (https://www.mongodb.com/docs/manual/reference/operator/query/text/):
 *
 * - a `$text` query needs a text index (else code 27 IndexNotFound) and searches the string
 *   values of the fields that index names;
 * - words are compared case- and diacritic-insensitively (text index version 3), with no
 *   stemming and no stop words (language "none");
 * - `"quoted phrases"` must all occur; without a phrase, any of the words suffices;
 * - `{$meta: "textScore"}` in a sort orders by relevance, best first. The score here is the
 *   occurrences of the words over each field's length — not the server's formula, only its
 *   direction (more occurrences in a shorter field rank higher).
 *
 * Test-only.
 */
import { MongoServerError, type Document } from 'mongodb';

type Doc = Document & { _id?: unknown };

/** The hidden field holding a document's score while a cursor sorts it. */
export const TEXT_SCORE = '__mingo_text_score';

export interface TextSearch {
  /** The filter without `$text`. */
  rest: Document;
  /** The score of a matching document, or null when it does not match. */
  score(doc: Doc): number | null;
}

/** Lowercased, diacritics removed, split on everything but letters and digits. */
function tokens(s: string): string[] {
  return s.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function valueAt(doc: Doc, path: string): unknown {
  let v: unknown = doc;
  for (const key of path.split('.')) v = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Document)[key] : undefined;
  return v;
}

/** Where `phrase` occurs as consecutive tokens in `words`. */
function occurrences(words: string[], phrase: string[]): number {
  let n = 0;
  for (let i = 0; i + phrase.length <= words.length; i++) if (phrase.every((t, j) => words[i + j] === t)) n++;
  return n;
}

/** `filter` split into its `$text` (top level) and the rest; null without `$text`. */
export function textSearch(filter: Document, indexes: Array<{ key: Document }>): TextSearch | null {
  if (!('$text' in filter)) return null;
  const { $text, ...rest } = filter as { $text: { $search?: unknown } };
  const index = indexes.find((i) => Object.values(i.key).includes('text'));
  if (!index) throw new MongoServerError({ message: 'text index required for $text query', code: 27, codeName: 'IndexNotFound' });
  const fields = Object.entries(index.key).filter(([, v]) => v === 'text').map(([k]) => k);
  const search = String($text.$search ?? '');
  const phrases = [...search.matchAll(/"([^"]*)"/g)].map((m) => tokens(m[1] ?? '')).filter((p) => p.length > 0);
  const loose = tokens(search.replace(/"[^"]*"/g, ' ')).map((t) => [t]);
  return {
    rest,
    score(doc) {
      const texts = fields.map((f) => valueAt(doc, f)).filter((v): v is string => typeof v === 'string').map(tokens);
      const count = (p: string[]): number => texts.reduce((n, words) => n + occurrences(words, p), 0);
      if (phrases.some((p) => count(p) === 0)) return null;
      const terms = [...phrases, ...loose];
      if (phrases.length === 0 && !loose.some((t) => count(t) > 0)) return null;
      let score = 0;
      for (const words of texts) for (const t of terms) score += occurrences(words, t) / Math.max(1, words.length);
      return score;
    },
  };
}

/** The documents `text` matches, each with its score in TEXT_SCORE (for a textScore sort). */
export function scored(text: TextSearch, docs: Doc[]): Doc[] {
  return docs.flatMap((d) => {
    const score = text.score(d);
    return score === null ? [] : [{ ...d, [TEXT_SCORE]: score }];
  });
}

/** A sort with `{$meta: "textScore"}` as one on the hidden score field, best first. */
export function serverSort(spec: Document): { [field: string]: 1 | -1 } {
  const out: { [field: string]: 1 | -1 } = {};
  for (const [k, v] of Object.entries(spec)) out[v !== null && typeof v === 'object' ? TEXT_SCORE : k] = v !== null && typeof v === 'object' ? -1 : (v as 1 | -1);
  return out;
}
