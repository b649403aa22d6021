/**
 * The realtime wire protocol (docs/realtime.md): JSON text frames, one message each.
 * Client → server: ClientMessage. Server → client: ServerMessage.
 */
import type { ErrorEnvelope } from './errors';
import type { RecordDoc } from './records';

export type EventKind = 'create' | 'update' | 'delete' | 'enter' | 'leave';

export interface DeliveredEvent {
  kind: EventKind;
  seq: number;
  /** create, update, enter: the record; delete: the deleted record; leave: only id and version. */
  record: RecordDoc | { id: string; version: number };
}

export type ServerMessage =
  | { type: 'welcome'; connection_id: string; heartbeat_ms: number }
  | { type: 'auth_ok'; user_id: string | null; expires_at: string | null }
  | { type: 'subscribed'; id: string; collection: string; revision: number; seq: number; epoch: string; expires_at: string | null; resumed: boolean }
  | { type: 'snapshot'; id: string; records: RecordDoc[]; cursor: string | null }
  | { type: 'events'; id: string; events: DeliveredEvent[] }
  | { type: 'unsubscribed'; id: string }
  | ({ type: 'error'; id?: string } & ErrorEnvelope)
  | { type: 'auth_revoked'; ended: string[] }
  | { type: 'auth_expired'; paused: string[] }
  | { type: 'resubscribe'; id: string; reason: 'collection_changed' | 'collection_deleted' }
  | { type: 'resync_required'; id: string; seq: number; epoch: string; reason?: 'lookup_changed' }
  | { type: 'pong' };

export interface SubscribeMessage {
  type: 'subscribe';
  id: string;
  collection: string;
  where?: unknown;
  orderBy?: unknown;
  direction?: unknown;
  limit?: unknown;
  snapshot?: boolean;
  /** Relation fields to expand in snapshots (records checks it). */
  expand?: unknown;
  resume_from?: number;
  /** The epoch `resume_from` was read in (`subscribed.epoch`); another epoch, or none, resyncs. */
  resume_epoch?: string;
}

export type ClientMessage =
  | { type: 'auth'; token: string | null }
  | SubscribeMessage
  | { type: 'unsubscribe'; id: string }
  | { type: 'ping' };
