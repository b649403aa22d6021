/**
 * An aggregate as a MongoDB pipeline: `$match` with the same translated filter as a list
 * (mongo-filter.ts), then one `$group` with the count, `$sum` and `$avg` of each field. `$sum`
 * and `$avg` skip missing, null and non-numeric values, as the SQLite adapter does; with no
 * matching record there is no group, and the answer is a count of 0, sums of 0 and means of null.
 */
import type { Collection } from '@plinth/shared';
import type { Document } from 'mongodb';
import type { AggregateQuery, AggregateResult } from '../record-store';
import { compileFilter, fieldPath } from './mongo-filter';
import { withSearch } from './mongo-search';

export function aggregatePipeline(collection: Collection, query: AggregateQuery): Document[] {
  const group: Document = { _id: null, count: { $sum: 1 } };
  // Output names s<i> and a<i>: field names never become operator or output keys.
  query.sum.forEach((f, i) => (group[`s${i}`] = { $sum: `$${fieldPath(f)}` }));
  query.avg.forEach((f, i) => (group[`a${i}`] = { $avg: `$${fieldPath(f)}` }));
  return [{ $match: withSearch(compileFilter(query.predicate, collection), query.search) }, { $group: group }];
}

export function aggregateResult(query: AggregateQuery, group: Document | undefined): AggregateResult {
  const number = (v: unknown): number | null => (typeof v === 'number' ? v : v === null || v === undefined ? null : Number(v));
  const result: AggregateResult = { count: number(group?.count) ?? 0, sum: {}, avg: {} };
  query.sum.forEach((f, i) => (result.sum[f] = number(group?.[`s${i}`]) ?? 0));
  query.avg.forEach((f, i) => (result.avg[f] = number(group?.[`a${i}`])));
  return result;
}
