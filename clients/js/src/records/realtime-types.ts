import type { PlinthError } from '../errors';
import type { PlinthRecord, QuerySpec } from './types';

/**
 * What a subscription's handler receives:
 * - `snapshot`: the first page of the query (with `{ snapshot: true }`, after a resync, or after
 *   the collection's rules changed);
 * - `create`, `update`, `enter` (a record now matches), `delete`: the record;
 * - `leave` (a record no longer matches): only its id and version;
 * - `error`: the subscription was refused or ended (e.g. the session was revoked); nothing follows.
 * Each change arrives once, in `seq` order, across reconnects.
 */
export type RealtimeEvent<T> =
  | { kind: 'snapshot'; records: PlinthRecord<T>[]; cursor: string | null }
  | { kind: 'create' | 'update' | 'enter' | 'delete'; seq: number; record: PlinthRecord<T> }
  | { kind: 'leave'; seq: number; record: { id: string; version: number } }
  | { kind: 'error'; error: PlinthError };

export interface SubscribeOptions {
  /** Send the query's first page before the changes (default false). */
  snapshot?: boolean;
}

/** Ends a subscription. */
export type Unsubscribe = () => void;

/** @internal What `enableRealtime` installs on a client; queries call it. */
export interface RealtimeHook {
  subscribe(spec: QuerySpec, handler: (event: RealtimeEvent<object>) => void, opts: SubscribeOptions): Unsubscribe;
}
