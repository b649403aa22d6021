import type { WebSocket } from 'ws';
import type { RealtimeMetrics } from './metrics';
import { serialized } from './outbound';
import type { DeliveredEvent, ServerMessage } from './protocol';

/**
 * The send path of one connection: a bounded send buffer (past it the client is dropped as a
 * slow consumer, 4008) and `events` messages whose events are serialized once, however many
 * subscriptions receive them (a shared query with 1,000 subscribers costs one JSON.stringify).
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
    const text = `{"type":"events","id":${JSON.stringify(id)},"events":[${events.map(serialized).join(',')}]}`;
    if (!this.text(text)) return;
    this.metrics.delivered.inc(events.length);
    const now = Date.now();
    for (const t of committedAt) this.metrics.latency.observe((now - t) / 1000);
  }

  private text(data: string): boolean {
    if (this.closed()) return false;
    // An empty buffer always takes one message (a large snapshot page); beyond that, the limit.
    const buffered = this.ws.bufferedAmount;
    if (buffered > 0 && buffered + Buffer.byteLength(data) > this.maxBufferedBytes) {
      this.overflow();
      return false;
    }
    this.ws.send(data);
    return true;
  }
}
