/**
 * The realtime wire protocol (docs/realtime.md): JSON text frames, one message each. The
 * messages are declared in @plinth/protocol; here, the close codes and the client message parser.
 */
import type { ClientMessage, SubscribeMessage } from '@plinth/protocol';

export type { ClientMessage, DeliveredEvent, EventKind, ServerMessage, SubscribeMessage } from '@plinth/protocol';

/** WebSocket close codes the server uses (docs/realtime.md "Close codes"). */
export const CLOSE = {
  /** Server shutting down: reconnect (to any replica) and resume. */
  goingAway: 1001,
  /** A message larger than REALTIME_MAX_MESSAGE_BYTES (sent by the `ws` library). */
  tooBig: 1009,
  /** The process has REALTIME_MAX_CONNECTIONS connections: try again later (another replica). */
  serverFull: 1013,
  /** No message and no pong for REALTIME_IDLE_TIMEOUT_MS. */
  idle: 4002,
  /** The project was deleted: its connections end; do not reconnect with the old keys. */
  projectDeleted: 4004,
  /** More messages (pings included) than REALTIME_MESSAGES_PER_SECOND allows, past REALTIME_MESSAGE_BURST. */
  tooManyMessages: 4009,
  /** The client did not read fast enough: its send buffer passed REALTIME_MAX_BUFFERED_BYTES. */
  slowConsumer: 4008,
  /**
   * A connection quota is full on this replica: the project's, its public key's, the client
   * address's (public key) or the user's (on `auth`).
   */
  tooManyConnections: 4029,
} as const;

/** A message the client sent that the server refuses; the connection stays open. */
export class ProtocolError extends Error {
  constructor(
    message: string,
    readonly details?: { [k: string]: unknown },
    readonly id?: string,
  ) {
    super(message);
  }
}

const SUB_ID = /^[\x21-\x7e]{1,64}$/;
const SUBSCRIBE_KEYS = new Set(['type', 'id', 'collection', 'where', 'orderBy', 'direction', 'limit', 'snapshot', 'expand', 'resume_from', 'resume_epoch']);

/** Parses one text frame. @throws ProtocolError naming what is wrong. */
export function parseClientMessage(text: string): ClientMessage {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    throw new ProtocolError('The message is not valid JSON.');
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new ProtocolError('A message must be a JSON object with a "type".');
  const o = m as { [k: string]: unknown };
  const id = typeof o.id === 'string' ? o.id : undefined;
  switch (o.type) {
    case 'auth':
      if (o.token !== null && (typeof o.token !== 'string' || o.token.length === 0 || o.token.length > 8192)) {
        throw new ProtocolError('"token" must be an access token (a string) or null.', { field: 'token' });
      }
      return { type: 'auth', token: o.token as string | null };
    case 'subscribe': {
      if (id === undefined || !SUB_ID.test(id)) throw new ProtocolError('"id" must be 1–64 printable characters.', { field: 'id' });
      for (const k of Object.keys(o)) if (!SUBSCRIBE_KEYS.has(k)) throw new ProtocolError(`Unknown field "${k}".`, { field: k }, id);
      if (typeof o.collection !== 'string' || o.collection.length === 0) throw new ProtocolError('"collection" must be a collection name.', { field: 'collection' }, id);
      if (o.snapshot !== undefined && typeof o.snapshot !== 'boolean') throw new ProtocolError('"snapshot" must be true or false.', { field: 'snapshot' }, id);
      if (o.resume_from !== undefined && (!Number.isSafeInteger(o.resume_from) || (o.resume_from as number) < 0)) {
        throw new ProtocolError('"resume_from" must be a seq: a non-negative integer.', { field: 'resume_from' }, id);
      }
      if (o.resume_epoch !== undefined && (typeof o.resume_epoch !== 'string' || o.resume_epoch.length > 64)) {
        throw new ProtocolError('"resume_epoch" must be the epoch of a subscribed message (a string).', { field: 'resume_epoch' }, id);
      }
      return { ...(o as unknown as SubscribeMessage), id };
    }
    case 'unsubscribe':
      if (id === undefined) throw new ProtocolError('"id" must name a subscription.', { field: 'id' });
      return { type: 'unsubscribe', id };
    case 'ping':
      return { type: 'ping' };
    default:
      throw new ProtocolError(
        typeof o.type === 'string' ? `Unknown message type "${o.type.slice(0, 40)}".` : 'A message must have a "type".',
        { field: 'type', allowed: ['auth', 'subscribe', 'unsubscribe', 'ping'] },
      );
  }
}
