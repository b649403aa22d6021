/**
 * Query cursors (docs/records.md): opaque base64url JSON holding the keyset position after the
 * last record of a page and a hash of the query it belongs to. A cursor reused with another
 * query (collection, where, orderBy or direction) is a 400. The limit may change between pages.
 */
import { InvalidRequestError, type Collection, type JsonValue, type Predicate, type RecordDoc } from '@plinth/shared';
import { fieldTypeOf } from '../store/record-shape';
import { RANK_ORDER, type KeysetPosition, type SortDirection } from '../store/record-store';
import { fingerprint } from './canonical-json';
import { coerceValue } from './field-values';

export interface QueryShape {
  collection: string;
  where: Predicate;
  orderBy: string;
  direction: SortDirection;
  /** The words of a full-text search, when there is one. */
  search?: string[];
}

/** Deepest position a ranked search page may start at (a ranked page continues by position). */
export const MAX_RANK_OFFSET = 10_000;

interface CursorBody {
  q: string;
  v: JsonValue;
  id: string;
}

function queryHash(shape: QueryShape): string {
  return fingerprint(shape).slice(0, 22);
}

function invalid(message: string): InvalidRequestError {
  return new InvalidRequestError(message, { parameter: 'cursor' });
}

/** `position`: for a ranked search (RANK_ORDER), how many records come before the next page. */
export function encodeCursor(shape: QueryShape, last: RecordDoc, position?: number): string {
  const v = shape.orderBy === RANK_ORDER ? (position ?? 0) : (last[shape.orderBy] ?? null);
  const body: CursorBody = { q: queryHash(shape), v, id: last.id };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** The keyset position in `raw`; throws 400 when malformed or made for another query. */
export function decodeCursor(shape: QueryShape, raw: string, collection: Collection): KeysetPosition {
  let body: Partial<CursorBody>;
  try {
    body = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<CursorBody>;
  } catch {
    throw invalid('"cursor" is not a cursor returned by this API.');
  }
  if (typeof body !== 'object' || body === null || typeof body.q !== 'string' || typeof body.id !== 'string' || !('v' in body)) {
    throw invalid('"cursor" is not a cursor returned by this API.');
  }
  if (body.q !== queryHash(shape)) {
    throw invalid('"cursor" belongs to another query; send the same where, orderBy and direction.');
  }
  if (shape.orderBy === RANK_ORDER) {
    if (typeof body.v !== 'number' || !Number.isInteger(body.v) || body.v < 0) throw invalid('"cursor" is not a cursor returned by this API.');
    if (body.v > MAX_RANK_OFFSET) {
      throw new InvalidRequestError(`A search ordered by relevance shows its first ${MAX_RANK_OFFSET} records; narrow it, or give an orderBy.`, {
        parameter: 'cursor',
        max: MAX_RANK_OFFSET,
      });
    }
    return { value: body.v, id: body.id };
  }
  const type = fieldTypeOf(collection, shape.orderBy);
  const value = body.v === null ? null : type ? coerceValue(type, body.v) : undefined;
  if (value === undefined) throw invalid('"cursor" is not a cursor returned by this API.');
  return { value, id: body.id };
}
