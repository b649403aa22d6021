/**
 * Records through `@plinth/client/admin` (secret key, which every rule lets through): list a page,
 * get one, stream a whole collection, create with an Idempotency-Key and learn whether it was a
 * replay, and restore exported records as they were (`records:import`).
 */
import type { RecordDoc } from '@plinth/protocol';
import type { CallOptions, Transport } from './transport';

/** A page of `GET …/records`, as the API answers it. */
export interface RecordPage {
  records: RecordDoc[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  cursor: string | null;
  total?: number;
}

export interface RecordListQuery {
  /** Conditions as the API takes them: JSON text (`[["done","==",false]]`) or the array itself. */
  where?: string | ReadonlyArray<readonly [string, string, unknown]>;
  orderBy?: string;
  direction?: 'asc' | 'desc' | (string & {});
  limit?: number;
  cursor?: string;
}

export interface RecordsAdmin {
  list(collection: string, query?: RecordListQuery, opts?: CallOptions): Promise<RecordPage>;
  get(collection: string, id: string, opts?: CallOptions): Promise<RecordDoc>;
  /** Every record of the collection by id, a page (up to `pageSize`, default 1000) at a time. */
  export(collection: string, opts?: CallOptions & { pageSize?: number }): AsyncIterable<RecordDoc>;
  /**
   * Creates a record with this Idempotency-Key: `replayed` is true when the key was used before
   * (with the same body), and `record` is then the one created the first time.
   */
  create(collection: string, data: Record<string, unknown>, opts: CallOptions & { idempotencyKey: string }): Promise<{ record: RecordDoc; replayed: boolean }>;
  /**
   * Stores exported records as they are (their ids, versions and timestamps), up to 1000 a call;
   * ids already stored are skipped and counted as `existing`.
   */
  import(collection: string, records: ReadonlyArray<Record<string, unknown>>, opts?: CallOptions): Promise<{ imported: number; existing: number }>;
}

export function recordsAdmin(t: Transport): RecordsAdmin {
  const r = (c: string) => `/collections/${encodeURIComponent(c)}/records`;
  const list = (collection: string, q: RecordListQuery = {}, o: CallOptions = {}) =>
    t.request<RecordPage>({
      method: 'GET',
      path: r(collection),
      query: { where: typeof q.where === 'string' || q.where === undefined ? q.where : JSON.stringify(q.where), orderBy: q.orderBy, direction: q.direction, limit: q.limit, cursor: q.cursor },
      signal: o.signal,
    });
  return {
    list,
    get: async (collection, id, o = {}) => (await t.request<{ record: RecordDoc }>({ method: 'GET', path: `${r(collection)}/${encodeURIComponent(id)}`, signal: o.signal })).record,
    async *export(collection, o = {}) {
      let cursor: string | undefined;
      do {
        const page = await list(collection, { orderBy: 'id', limit: o.pageSize ?? 1000, cursor }, o);
        yield* page.records;
        cursor = page.cursor ?? undefined;
      } while (cursor);
    },
    create: async (collection, data, o) => {
      let replayed = false;
      const { record } = await t.request<{ record: RecordDoc }>({
        method: 'POST',
        path: r(collection),
        body: { data },
        headers: { 'Idempotency-Key': o.idempotencyKey },
        onHeaders: (header) => (replayed = header('idempotent-replayed') === 'true'),
        signal: o.signal,
      });
      return { record, replayed };
    },
    import: (collection, records, o = {}) => t.request({ method: 'POST', path: `${r(collection)}:import`, body: { records }, signal: o.signal }),
  };
}
