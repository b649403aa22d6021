/**
 * `@plinth/client/records`: records only, without Auth — for servers that hold a secret key or
 * a minted user token. Browsers normally use `createClient` from `@plinth/client`.
 */
import { Collection, type CreateOptions } from './records/collection';
import { fileToken, type FileTokenOptions } from './files/files';
import type { FileToken } from './files/types';
import { runBatch, type BatchOperation, type BatchResult } from './records/batch';
import type { RecordsContext } from './records/context';
import type { CollectionAccessor, UntypedCollections } from './records/typed';
import type { TokenSource } from './records/types';
import { Transport, type TransportOptions } from './transport';

export interface RecordsClientOptions extends TransportOptions {
  /** The user token to send as `X-Db-User-Token` (e.g. a minted one), if any. */
  token?: string | TokenSource;
}

/** `C`: the collections' record types by name, as `plinth types` writes them (`Collections`). */
export interface RecordsClient<C extends object = UntypedCollections> {
  readonly collection: CollectionAccessor<C>;
  /** Writes every operation or none, across collections (up to 100); see docs/records.md "Batch writes". */
  batch(operations: BatchOperation[], opts?: CreateOptions): Promise<BatchResult[]>;
  /** File tokens, for file URLs a request cannot add headers to (`<img src>`); see docs/files.md. */
  readonly files: { token(opts?: FileTokenOptions): Promise<FileToken> };
  /** Closes what realtime opened, if anything. */
  close(): void;
  /** @internal */
  readonly records: RecordsContext;
}

export function createRecordsClient<C extends object = UntypedCollections>(opts: RecordsClientOptions): RecordsClient<C> {
  const t = opts.token;
  const token: TokenSource = typeof t === 'function' ? t : async () => t ?? null;
  const records: RecordsContext = { transport: new Transport(opts), token, closers: [] };
  return {
    records,
    collection: ((name: string) => new Collection(records, name)) as CollectionAccessor<C>,
    batch: (operations, opts) => runBatch(records, operations, opts),
    files: { token: (o) => fileToken(records, o) },
    close: () => {
      for (const c of records.closers.splice(0)) c();
    },
  };
}

export { Collection } from './records/collection';
export type { CreateOptions, UpdateOptions, VersionOptions } from './records/collection';
export type { FileInput, FileInputs, FileMeta, FileToken, FileUrlOptions, UploadOptions, UploadProgress } from './files/types';
export { filesOf, type FileTokenOptions } from './files/files';
export { ResumableUploadError, type ResumableOptions, type UploadSessionInfo } from './files/resumable';
export type { BatchOperation, BatchResult } from './records/batch';
export { Query } from './records/query';
export type { RealtimeEvent, SubscribeOptions, Unsubscribe } from './records/realtime-types';
export type { Aggregates, Condition, Direction, Expanded, ExpandedRecord, NumberField, Page, PlinthRecord, QuerySpec, RecordData, SystemFields, TokenSource, WhereOp } from './records/types';
export type { CollectionAccessor, CollectionName, TypedCollection, UntypedCollections, UserFields } from './records/typed';
export { ConflictError, PlinthError, isNetworkError, type PlinthErrorCode } from './errors';
export type { CallOptions, TransportOptions } from './transport';
