/**
 * The query parameters of `GET …/aggregate`: `where` and `search` (as on a list), `count=true`, and `sum` and
 * `avg`, each a comma-separated list of number or integer fields (`sum=price,qty`), given once.
 * At least one of count, sum and avg; at most MAX_AGGREGATE_FIELDS fields in all; any other
 * parameter is a 400 naming it.
 */
import { InvalidRequestError, type Collection, type Predicate } from '@plinth/shared';
import { fieldTypeOf } from '../store/record-shape';
import { parseFlag, refuseUnknownParameters, single, type RawParams } from './list-query';
import { parseSearch } from './search-terms';
import { parseWhere } from './where';

export const AGGREGATE_PARAMETERS: readonly string[] = ['where', 'search', 'count', 'sum', 'avg'];
/** Most fields named by sum and avg together (each is one more expression per record visited). */
export const MAX_AGGREGATE_FIELDS = 10;

export interface AggregateRequest {
  where: Predicate;
  /** Full-text search words (search-terms.ts), when given. */
  search?: string[];
  count: boolean;
  sum: string[];
  avg: string[];
}

/** The fields of `sum` or `avg`: distinct, each a number or integer field of the collection. */
function numericFields(collection: Collection, params: RawParams, name: 'sum' | 'avg'): string[] {
  const raw = single(params, name);
  if (raw === undefined) return [];
  const fields = [...new Set(raw.split(',').map((f) => f.trim()))];
  if (fields.length > MAX_AGGREGATE_FIELDS) {
    throw new InvalidRequestError(`"${name}" may name at most ${MAX_AGGREGATE_FIELDS} fields.`, { parameter: name, max: MAX_AGGREGATE_FIELDS });
  }
  for (const field of fields) {
    const type = fieldTypeOf(collection, field);
    if (type === 'number' || type === 'integer') continue;
    const shown = field.length > 64 ? `${field.slice(0, 64)}…` : field;
    throw new InvalidRequestError(
      type === undefined
        ? `Cannot ${name} "${shown}": not a field of this collection.`
        : `Cannot ${name} "${shown}": a field of type ${type}; only number and integer fields can be summed or averaged.`,
      { parameter: name, field: shown },
    );
  }
  return fields;
}

export function parseAggregateQuery(collection: Collection, params: RawParams): AggregateRequest {
  refuseUnknownParameters(params, AGGREGATE_PARAMETERS);
  const where = parseWhere(collection, params.where);
  const search = parseSearch(collection, params.search);
  const count = parseFlag(params, 'count');
  const sum = numericFields(collection, params, 'sum');
  const avg = numericFields(collection, params, 'avg');
  if (sum.length + avg.length > MAX_AGGREGATE_FIELDS) {
    throw new InvalidRequestError(`"sum" and "avg" may name at most ${MAX_AGGREGATE_FIELDS} fields together.`, { parameter: 'sum', max: MAX_AGGREGATE_FIELDS });
  }
  if (!count && sum.length === 0 && avg.length === 0) {
    throw new InvalidRequestError('Ask for at least one of count=true, sum=<fields> and avg=<fields>.', { parameter: 'count' });
  }
  return { where, ...(search ? { search } : {}), count, sum, avg };
}
