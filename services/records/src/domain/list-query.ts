/**
 * The query parameters of `GET …/records` (docs/records.md): where, orderBy, direction (asc|desc,
 * default asc), limit (default 50, 1–1000), cursor, count (true: the answer also has `total`,
 * the number of records the whole query matches) and search (full-text, ordered by relevance
 * unless orderBy is given); any other parameter is a 400. Default order: created_at ascending;
 * every order is tie-broken by id.
 */
import { InvalidRequestError, type Collection, type Predicate } from '@plinth/shared';
import { RANK_ORDER, type KeysetPosition } from '../store/record-store';
import { parseSearch } from './search-terms';
import { decodeCursor, type QueryShape } from './cursor';
import { isOrderable, parseWhere } from './where';

export const DEFAULT_LIMIT = 50;
/** Every query parameter the list endpoint reads; any other is a 400, never silently ignored. */
export const LIST_PARAMETERS: readonly string[] = ['where', 'orderBy', 'direction', 'limit', 'cursor', 'count', 'search'];
export const MAX_LIMIT = 1000;

export interface ListQuery {
  shape: QueryShape;
  limit: number;
  after?: KeysetPosition;
  /** `count=true`: also count every record the query matches (the page's `total`). */
  count: boolean;
  /** `search=`: the words of a full-text search (search-terms.ts); also in `shape`. */
  search?: string[];
}

export type RawParams = { [name: string]: unknown };

export function single(params: RawParams, name: string): string | undefined {
  const v = params[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new InvalidRequestError(`"${name}" must be given once.`, { parameter: name });
  return v;
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  const n = /^\d{1,7}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT) {
    throw new InvalidRequestError(`"limit" must be an integer from 1 to ${MAX_LIMIT}.`, { parameter: 'limit', max: MAX_LIMIT });
  }
  return n;
}

/** 400 naming the first parameter the endpoint does not know (`?wher=` would otherwise return everything). */
export function refuseUnknownParameters(params: RawParams, known: readonly string[]): void {
  for (const name of Object.keys(params)) {
    if (known.includes(name)) continue;
    const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
    throw new InvalidRequestError(`Unknown query parameter "${shown}"; this endpoint takes ${known.join(', ')}.`, {
      parameter: shown,
      known,
    });
  }
}

/** `count` (or another flag): true or false, default false. */
export function parseFlag(params: RawParams, name: string): boolean {
  const raw = single(params, name);
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new InvalidRequestError(`"${name}" must be true or false.`, { parameter: name });
}

export function parseListQuery(collection: Collection, params: RawParams): ListQuery {
  refuseUnknownParameters(params, LIST_PARAMETERS);
  const where: Predicate = parseWhere(collection, params.where);
  const search = parseSearch(collection, params.search);
  // A search without orderBy is ordered by relevance.
  const orderBy = single(params, 'orderBy') ?? (search ? RANK_ORDER : 'created_at');
  // RANK_ORDER is never a field (names start with a letter): only the order of a search.
  if (orderBy === RANK_ORDER ? !search : !isOrderable(collection, orderBy)) {
    throw new InvalidRequestError(`Cannot order by "${orderBy}": not a field of this collection, or of type json or list.`, {
      parameter: 'orderBy',
      field: orderBy,
    });
  }
  const direction = single(params, 'direction') ?? 'asc';
  if (direction !== 'asc' && direction !== 'desc') {
    throw new InvalidRequestError('"direction" must be asc or desc.', { parameter: 'direction' });
  }
  const limit = parseLimit(single(params, 'limit'));
  const count = parseFlag(params, 'count');
  // `search` joins the shape only when given, so the cursors of other queries stay as they were.
  const shape: QueryShape = { collection: collection.name, where, orderBy, direction, ...(search ? { search } : {}) };
  const base = { shape, limit, count, ...(search ? { search } : {}) };
  const cursor = single(params, 'cursor');
  if (cursor === undefined || cursor === '') return base;
  return { ...base, after: decodeCursor(shape, cursor, collection) };
}
