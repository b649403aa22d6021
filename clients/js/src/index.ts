/**
 * `@plinth/client`: records and Auth for browsers and Node, no runtime dependencies.
 *
 *   const plinth = createClient({ url, project: 'demo', key: 'pk_…', storage: localStorage });
 *   await plinth.auth.signIn(email, password);
 *   await plinth.collection('notes').create({ body: 'hi' });
 *
 * Realtime lives in `@plinth/client/realtime`, secret-key helpers in `@plinth/client/admin`.
 */
import { Auth } from './auth/auth';
import { SessionManager } from './auth/session-manager';
import { Collection, type CreateOptions } from './records/collection';
import { fileToken, type FileTokenOptions } from './files/files';
import type { FileToken } from './files/types';
import { runBatch, type BatchOperation, type BatchResult } from './records/batch';
import type { RecordsContext } from './records/context';
import type { CollectionAccessor, UntypedCollections } from './records/typed';
import { memoryStorage, type SessionStorage } from './storage';
import { Transport, type TransportOptions } from './transport';

export interface ClientOptions extends TransportOptions {
  /** Where the session is kept: memory (default), `localStorage`, or your own (e.g. cookies). */
  storage?: SessionStorage;
  /** Storage key of the session (default `plinth.session.<project>`). */
  storageKey?: string;
  /** Refresh when fewer than this many seconds of the access token remain (default 60, at most half its lifetime). */
  refreshMargin?: number;
  /** Refresh on a timer before expiry (default true). */
  autoRefresh?: boolean;
  /**
   * Share the session with the other tabs of the origin: one refresh at a time (Web Locks) and
   * refreshed sessions and sign-outs passed on (BroadcastChannel). Default: on when `storage` is
   * the browser's `localStorage`, off otherwise — so two clients of one server process, each with
   * its own storage, never see each other's sessions.
   */
  multiTab?: boolean;
}

/** `C`: the collections' record types by name, as `plinth types` writes them (`Collections`). */
export interface PlinthClient<C extends object = UntypedCollections> {
  readonly auth: Auth;
  /** The records of a collection; calls carry the signed-in user's token. */
  readonly collection: CollectionAccessor<C>;
  /** Writes every operation or none, across collections (up to 100); see docs/records.md "Batch writes". */
  batch(operations: BatchOperation[], opts?: CreateOptions): Promise<BatchResult[]>;
  /** File tokens, for file URLs a request cannot add headers to (`<img src>`); see docs/files.md. */
  readonly files: { token(opts?: FileTokenOptions): Promise<FileToken> };
  /** Stops timers and channels (a server process or a test ends with it). */
  close(): void;
  /** @internal */
  readonly records: RecordsContext;
}

/** `createClient<Collections>(…)` types `collection(name)` by the map `plinth types` generated. */
export function createClient<C extends object = UntypedCollections>(opts: ClientOptions): PlinthClient<C> {
  const transport = new Transport(opts);
  const sessions = new SessionManager(transport, {
    storage: opts.storage ?? memoryStorage(),
    storageKey: opts.storageKey ?? `plinth.session.${opts.project}`,
    refreshMargin: opts.refreshMargin,
    autoRefresh: opts.autoRefresh ?? true,
    multiTab: opts.multiTab ?? (opts.storage !== undefined && opts.storage === (globalThis as { localStorage?: unknown }).localStorage),
  });
  const records: RecordsContext = {
    transport,
    token: (signal) => sessions.accessToken(signal),
    onToken: (listener) => sessions.onChange((_event, s) => listener(s?.access_token ?? null)),
    closers: [() => sessions.close()],
  };
  return {
    auth: new Auth(transport, sessions),
    records,
    collection: ((name: string) => new Collection(records, name)) as CollectionAccessor<C>,
    batch: (operations, opts) => runBatch(records, operations, opts),
    files: { token: (o) => fileToken(records, o) },
    close: () => {
      for (const c of records.closers.splice(0)) c();
    },
  };
}

export { Auth, type ConfirmOptions, type Proof, type SignUpInput } from './auth/auth';
export type { AuthEvent, AuthListener, Session, User } from './auth/types';
export { Mfa, MfaRequiredError, type MfaConfirmation, type MfaEnrollment, type MfaFactor, type SecondFactor } from './auth/mfa';
export type { Identity, OAuthOptions } from './auth/oauth';
export { localStorageAdapter, memoryStorage, type SessionStorage } from './storage';
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
