import type { CallOptions } from '../transport';
import type { RecordsContext } from './context';
import type { RealtimeEvent, SubscribeOptions, Unsubscribe } from './realtime-types';
import type { Aggregates, Direction, NumberField, Page, QuerySpec, WhereOp } from './types';

/**
 * An immutable query: `where`, `orderBy` and `limit` each return a new Query.
 * `get()` reads one page; `for await (const r of query)` reads every page, following the cursor.
 */
export class Query<T> implements AsyncIterable<Page<T>['records'][number]> {
  constructor(
    /** @internal */
    readonly ctx: RecordsContext,
    readonly spec: QuerySpec,
  ) {}

  where(field: Extract<keyof T, string> | 'id' | 'version' | 'created_at' | 'updated_at', op: WhereOp, value: unknown): Query<T> {
    return this.with({ where: [...this.spec.where, [field, op, value]] });
  }

  orderBy(field: Extract<keyof T, string> | 'id' | 'version' | 'created_at' | 'updated_at', direction: Direction = 'asc'): Query<T> {
    return this.with({ orderBy: field, direction });
  }

  limit(n: number): Query<T> {
    return this.with({ limit: n });
  }

  /**
   * Expands relation fields in every record read (pages and realtime snapshots): `expand('author',
   * 'post.author')` puts each record the caller may read under `record.expand.author`.
   */
  expand(...fields: string[]): Query<T> {
    return this.with({ expand: [...(this.spec.expand ?? []), ...fields] });
  }

  /**
   * Full-text search over the collection's `searchable` fields: records holding every word,
   * best match first unless `orderBy` is given. Lists, `count()` and `aggregate()`, not `subscribe`.
   */
  search(words: string): Query<T> {
    return this.with({ search: words });
  }

  /**
   * One page. Pass the previous page's `cursor` to continue; `count: true` adds `total`;
   * `search` (as `.search(words)`) finds records holding every word in the searchable fields.
   */
  async get(opts: CallOptions & { cursor?: string | null; count?: boolean; search?: string } = {}): Promise<Page<T>> {
    const token = await this.ctx.token(opts.signal);
    const s = this.spec;
    return this.ctx.transport.request<Page<T>>({
      method: 'GET',
      path: `/collections/${encodeURIComponent(s.collection)}/records`,
      query: {
        where: s.where.length ? JSON.stringify(s.where) : undefined,
        orderBy: s.orderBy,
        direction: s.direction,
        limit: s.limit,
        cursor: opts.cursor ?? undefined,
        count: opts.count ? 'true' : undefined,
        expand: s.expand?.length ? s.expand.join(',') : undefined,
        search: opts.search ?? s.search,
      },
      headers: token ? { 'X-Db-User-Token': token } : undefined,
      signal: opts.signal,
    });
  }

  /** How many records this query matches (the read rule applies; `orderBy` and `limit` do not). */
  async count(opts: CallOptions = {}): Promise<number> {
    return (await this.aggregate({ count: true }, opts)).count ?? 0;
  }

  /**
   * `GET …/aggregate`: the count, and the sums and means of number fields, of the records this
   * query matches — `aggregate({ count: true, sum: ['price'], avg: ['price'] })`.
   */
  async aggregate<S extends NumberField<T> = never, A extends NumberField<T> = never>(
    spec: { count?: boolean; sum?: readonly S[]; avg?: readonly A[] },
    opts: CallOptions = {},
  ): Promise<Aggregates<S, A>> {
    const token = await this.ctx.token(opts.signal);
    const s = this.spec;
    return this.ctx.transport.request<Aggregates<S, A>>({
      method: 'GET',
      path: `/collections/${encodeURIComponent(s.collection)}/aggregate`,
      query: {
        where: s.where.length ? JSON.stringify(s.where) : undefined,
        search: s.search,
        count: spec.count ? 'true' : undefined,
        sum: spec.sum?.length ? spec.sum.join(',') : undefined,
        avg: spec.avg?.length ? spec.avg.join(',') : undefined,
      },
      headers: token ? { 'X-Db-User-Token': token } : undefined,
      signal: opts.signal,
    });
  }

  /** Every record of every page, page by page (`limit` is the page size). */
  async *all(opts: CallOptions = {}): AsyncGenerator<Page<T>['records'][number]> {
    let cursor: string | null = null;
    do {
      const page: Page<T> = await this.get({ cursor, signal: opts.signal });
      yield* page.records;
      cursor = page.cursor;
    } while (cursor);
  }

  /**
   * Live changes of this query over the client's one shared WebSocket (`enableRealtime` from
   * `@plinth/client/realtime` must have been called on the client).
   */
  subscribe(handler: (event: RealtimeEvent<T>) => void, opts: SubscribeOptions = {}): Unsubscribe {
    if (this.spec.search !== undefined) throw new Error('Plinth realtime subscriptions take where conditions, not a full-text search.');
    const rt = this.ctx.realtime;
    if (!rt) throw new Error("Plinth realtime is not enabled: import { enableRealtime } from '@plinth/client/realtime' and call enableRealtime(client).");
    return rt.subscribe(this.spec, handler as (event: RealtimeEvent<object>) => void, opts);
  }

  [Symbol.asyncIterator](): AsyncIterator<Page<T>['records'][number]> {
    return this.all()[Symbol.asyncIterator]();
  }

  private with(change: Partial<QuerySpec>): Query<T> {
    return new Query<T>(this.ctx, { ...this.spec, ...change });
  }
}
