/**
 * `@plinth/client/realtime`: live queries over one shared WebSocket per client.
 *
 *   import { enableRealtime } from '@plinth/client/realtime';
 *   enableRealtime(plinth);
 *   const stop = plinth.collection('notes').where('owner', '==', uid).subscribe((e) => …, { snapshot: true });
 */
import type { RecordsContext } from './records/context';
import { RealtimeConnection, type RealtimeOptions } from './realtime/connection';

/**
 * Installs realtime on a client (from `createClient` or `createRecordsClient`), so its queries
 * can `subscribe`. Idempotent: a second call returns the same connection.
 */
export function enableRealtime(client: { readonly records: RecordsContext }, opts: RealtimeOptions = {}): RealtimeConnection {
  const ctx = client.records;
  if (ctx.realtime instanceof RealtimeConnection) return ctx.realtime;
  const conn = new RealtimeConnection(ctx, opts);
  ctx.realtime = conn;
  ctx.closers.push(() => conn.close());
  return conn;
}

export { RealtimeConnection, type RealtimeOptions, type WebSocketConstructor, type WebSocketLike } from './realtime/connection';
export type { RealtimeEvent, SubscribeOptions, Unsubscribe } from './records/realtime-types';
