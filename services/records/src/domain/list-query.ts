/**
 * The query parameters of `GET …/records` (DESIGN.md §5): where, orderBy, direction (asc|desc,
 * default asc), limit (default 50, 1–1000) and cursor. Default order: created_at ascending;
 * every order is tie-broken by id.
 */
import { InvalidRequestError, type Collection, type Predicate } from '@plinth/shared';
import type { KeysetPosition } from '../store/record-store';
import { decodeCursor, type QueryShape } from './cursor';
import { isOrderable, parseWhere } from './where';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;

export interface ListQuery {
  shape: QueryShape;
  limit: number;
  after?: KeysetPosition;
}

type RawParams = { [name: string]: unknown };

function single(params: RawParams, name: string): string | undefined {
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

export function parseListQuery(collection: Collection, params: RawParams): ListQuery {
  const where: Predicate = parseWhere(collection, params.where);
  const orderBy = single(params, 'orderBy') ?? 'created_at';
  if (!isOrderable(collection, orderBy)) {
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
  const shape: QueryShape = { collection: collection.name, where, orderBy, direction };
  const cursor = single(params, 'cursor');
  if (cursor === undefined || cursor === '') return { shape, limit };
  return { shape, limit, after: decodeCursor(shape, cursor, collection) };
}
