/** The records screen's query: its shape, and the list request's parameters it becomes. */
import type { Json } from '../api';

export const OPS = ['==', '!=', '<', '<=', '>', '>=', 'in', 'not-in', 'array-contains', 'array-contains-any', 'contains', 'starts-with'] as const;
export const SYSTEM = ['id', 'version', 'created_at', 'updated_at'];

export interface Cond {
  field: string;
  op: string;
  value: string;
}

export interface Query {
  where: Cond[];
  /** Full-text search words ('' for none); orderBy '' then means "by relevance". */
  search: string;
  orderBy: string;
  direction: 'asc' | 'desc';
  limit: number;
}

export const EMPTY_QUERY: Query = { where: [], search: '', orderBy: 'created_at', direction: 'asc', limit: 20 };

/** A typed value: JSON when it parses (numbers, booleans, lists), else the text itself. */
export function typed(s: string): Json {
  try {
    return JSON.parse(s) as Json;
  } catch {
    return s;
  }
}

/** The where conditions as the API takes them: `[field, op, value]`. */
export const whereOf = (q: Query): [string, string, Json][] => q.where.map((c) => [c.field, c.op, typed(c.value)]);

/** Whether the query narrows the collection (a where condition or search words). */
export const filtered = (q: Query): boolean => q.where.length > 0 || q.search.trim() !== '';

/**
 * The list request's parameters, in the order the API documents them. `count`: also the whole
 * query's total; `limit` overrides the page size (the CSV export reads 1000 at a time).
 */
export function listParams(q: Query, opts: { cursor?: string | null; count?: boolean; limit?: number } = {}): [string, string][] {
  const out: [string, string][] = [];
  if (q.where.length) out.push(['where', JSON.stringify(whereOf(q))]);
  if (q.search.trim()) out.push(['search', q.search]);
  if (q.orderBy) out.push(['orderBy', q.orderBy]);
  out.push(['direction', q.direction], ['limit', String(opts.limit ?? q.limit)]);
  if (opts.count) out.push(['count', 'true']);
  if (opts.cursor) out.push(['cursor', opts.cursor]);
  return out;
}
