import type { WebSocket } from 'ws';
import type { RealtimeMetrics } from './metrics';
import { serialized } from './outbound';
import type { DeliveredEvent, ServerMessage } from './protocol';

/**
 * The last `events` message made, as bytes. The hub hands one batch of events to each
 * subscription of a collection in turn, and every subscription with the same id that receives the
 * same deliveries (shared objects, matching.ts) would make the same message: it is made and
 * UTF-8 encoded once, and the same bytes go to every socket (ws sends a Buffer without copying it).
 */
let lastMessage: { id: string; events: DeliveredEvent[]; bytes: Buffer } | null = null;

function eventsMessage(id: string, events: DeliveredEvent[]): Buffer {
  const last = lastMessage;
  if (last && last.id === id && last.events.length === events.length && last.events.every((e, i) => e === events[i])) return last.bytes;
  const bytes = Buffer.from(`{"type":"events","id":${JSON.stringify(id)},"events":[${events.map(serialized).join(',')}]}`);
  lastMessage = { id, events: events.slice(), bytes };
  return bytes;
}

/**
 * The send path of one connection: a bounded send buffer (past it the client is dropped as a
 * slow consumer, 4008) and `events` messages whose events are serialized once, however many
 * subscriptions receive them (a shared query with 1,000 subscribers costs one JSON.stringify and
 * one UTF-8 encoding of the message).
 */
export class SocketSender {
  constructor(
    private readonly ws: WebSocket,
    private readonly maxBufferedBytes: number,
    private readonly metrics: RealtimeMetrics,
    private readonly closed: () => boolean,
    private readonly overflow: () => void,
  ) {}

  send(msg: ServerMessage): boolean {
    return this.text(JSON.stringify(msg));
  }

  /** One `events` message for subscription `id`. */
  events(id: string, events: DeliveredEvent[], committedAt: number[]): void {
    if (events.length === 0) return;
    if (!this.text(eventsMessage(id, events))) return;
    this.metrics.delivered.inc(events.length);
    const now = Date.now();
    for (const t of committedAt) this.metrics.latency.observe((now - t) / 1000);
  }

  /** Sends a text message (a string, or its UTF-8 bytes). */
  private text(data: string | Buffer): boolean {
    if (this.closed()) return false;
    // An empty buffer always takes one message (a large snapshot page); beyond that, the limit.
    const buffered = this.ws.bufferedAmount;
    if (buffered > 0 && buffered + (typeof data === 'string' ? Buffer.byteLength(data) : data.length) > this.maxBufferedBytes) {
      this.overflow();
      return false;
    }
    this.ws.send(data, { binary: false });
    return true;
  }
}
