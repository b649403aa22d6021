import { isNetworkError } from '../errors';
import { sleep, uuid, type CallOptions } from '../transport';
import { recordForm } from '../files/form';
import { fileUrl } from '../files/files';
import { uploadResumable, type ResumableOptions } from '../files/resumable';
import type { FileMeta, FileUrlOptions, UploadOptions } from '../files/types';
import type { RecordsContext } from './context';
import { Query } from './query';
import type { RealtimeEvent, SubscribeOptions, Unsubscribe } from './realtime-types';
import type { Direction, Page, PlinthRecord, RecordData, WhereOp } from './types';

export interface CreateOptions extends CallOptions, UploadOptions {
  /** Defaults to a fresh UUID; the same key is sent again on every retry. */
  idempotencyKey?: string;
  /** How many times a create that got no answer is sent again (default 3). */
  retries?: number;
}

export interface VersionOptions extends CallOptions {
  /** Succeeds only if this is the record's current version; otherwise a `ConflictError`. */
  version?: number;
}

export type UpdateOptions = VersionOptions & UploadOptions;

const hasFiles = (opts: UploadOptions): boolean => opts.files !== undefined && Object.keys(opts.files).length > 0;

type Fields<T> = Extract<keyof T, string> | 'id' | 'version' | 'created_at' | 'updated_at';

/** The records of one collection: create, get, update, delete, and queries. */
export class Collection<T extends object = Record<string, unknown>> {
  constructor(
    /** @internal */
    readonly ctx: RecordsContext,
    readonly name: string,
  ) {}

  private path(id?: string): string {
    const base = `/collections/${encodeURIComponent(this.name)}/records`;
    return id === undefined ? base : `${base}/${encodeURIComponent(id)}`;
  }

  private async headers(signal?: AbortSignal, extra?: Record<string, string>): Promise<Record<string, string>> {
    const token = await this.ctx.token(signal);
    return token ? { ...extra, 'X-Db-User-Token': token } : { ...extra };
  }

  /**
   * Creates a record. An `Idempotency-Key` is always sent, and a request that got no answer is
   * sent again with the same key, so a retried create never makes a second record.
   * With `files`, the write is `multipart/form-data` and the record's file fields hold the
   * stored files' metadata (`onProgress` reports the upload; see docs/files.md).
   */
  async create(data: RecordData<T>, opts: CreateOptions = {}): Promise<PlinthRecord<T>> {
    const key = opts.idempotencyKey ?? uuid();
    const retries = opts.retries ?? 3;
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await this.ctx.transport.request<{ record: PlinthRecord<T> }>({
          method: 'POST',
          path: this.path(),
          ...this.body({ data }, opts),
          headers: await this.headers(opts.signal, { 'Idempotency-Key': key }),
          signal: opts.signal,
        });
        return res.record;
      } catch (err) {
        if (!isNetworkError(err) || attempt >= retries) throw err;
        await sleep(100 * 2 ** attempt * (0.5 + Math.random()), opts.signal);
      }
    }
  }

  /** One record; `expand: ['author']` also puts the records its relation fields point at under `record.expand`. */
  async get(id: string, opts: CallOptions & { expand?: string[] } = {}): Promise<PlinthRecord<T>> {
    const res = await this.ctx.transport.request<{ record: PlinthRecord<T> }>({
      method: 'GET',
      path: this.path(id),
      query: opts.expand?.length ? { expand: opts.expand.join(',') } : undefined,
      headers: await this.headers(opts.signal),
      signal: opts.signal,
    });
    return res.record;
  }

  /**
   * Merges `data` into the record (`null` removes a field, a file field's files included). With
   * `version`, a stale version → `ConflictError`. With `files`, those fields get the files sent.
   */
  async update(id: string, data: RecordData<T>, opts: UpdateOptions = {}): Promise<PlinthRecord<T>> {
    const res = await this.ctx.transport.request<{ record: PlinthRecord<T> }>({
      method: 'PATCH',
      path: this.path(id),
      ...this.body(opts.version === undefined ? { data } : { data, version: opts.version }, opts),
      // A multipart update carries its version in the query (the body is the form).
      query: hasFiles(opts) && opts.version !== undefined ? { version: opts.version } : undefined,
      headers: await this.headers(opts.signal),
      signal: opts.signal,
    });
    return res.record;
  }

  /** A JSON body, or with files the multipart form of the same write (the `data` part holds `data`). */
  private body(json: { data: unknown; version?: number }, opts: UploadOptions): { body: unknown } | { payload: FormData; onProgress?: UploadOptions['onProgress'] } {
    if (!hasFiles(opts)) return { body: json };
    return { payload: recordForm(json.data, opts.files!), onProgress: opts.onProgress };
  }

  /**
   * The URL of a file the record holds in `field` (its first file when `name` is left out);
   * `{ thumb: '100x100' }` for a thumbnail, `{ token }` (from `files.token()`) for `<img src>`.
   */
  fileUrl(record: { id: string }, field: Extract<keyof T, string> | string, name?: string | FileMeta, opts?: FileUrlOptions): string {
    return fileUrl(this.ctx, this.name, record, field, name, opts);
  }

  /**
   * Sends a large file to the record's file field in parts, resuming where it stopped (see
   * docs/files.md "Resumable uploads"); resolves the record once the file is attached under the
   * update rule. A stop past the retries is a `ResumableUploadError`: call again with its `uploadId`.
   */
  uploadResumable(recordId: string, field: Extract<keyof T, string> | string, file: Blob, opts?: ResumableOptions): Promise<PlinthRecord<T>> {
    return uploadResumable<PlinthRecord<T>>(this.ctx, this.name, recordId, field, file, opts);
  }

  /** Deletes the record. With `version`, a stale version → `ConflictError`. */
  async delete(id: string, opts: VersionOptions = {}): Promise<void> {
    await this.ctx.transport.request<{ deleted: true }>({
      method: 'DELETE',
      path: this.path(id),
      query: { version: opts.version },
      headers: await this.headers(opts.signal),
      signal: opts.signal,
    });
  }

  /** A query of every record (add `where`, `orderBy`, `limit`). */
  query(): Query<T> {
    return new Query<T>(this.ctx, { collection: this.name, where: [] });
  }

  where(field: Fields<T>, op: WhereOp, value: unknown): Query<T> {
    return this.query().where(field, op, value);
  }

  /** A full-text search over the searchable fields (same as `query().search(words)`). */
  search(words: string): Query<T> {
    return this.query().search(words);
  }

  orderBy(field: Fields<T>, direction: Direction = 'asc'): Query<T> {
    return this.query().orderBy(field, direction);
  }

  limit(n: number): Query<T> {
    return this.query().limit(n);
  }

  /** A query of every record with these relation fields expanded (see `Query.expand`). */
  expand(...fields: string[]): Query<T> {
    return this.query().expand(...fields);
  }

  /** Live changes of every record of the collection (see `Query.subscribe`). */
  subscribe(handler: (event: RealtimeEvent<T>) => void, opts: SubscribeOptions = {}): Unsubscribe {
    return this.query().subscribe(handler, opts);
  }

  /** The first page of every record (same as `query().get()`). */
  list(opts: CallOptions & { cursor?: string | null } = {}): Promise<Page<T>> {
    return this.query().get(opts);
  }
}
