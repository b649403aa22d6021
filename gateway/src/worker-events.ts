import cluster from 'node:cluster';
import { SqliteEventBus, type EventBus } from '@plinth/shared';

/** The message a standalone worker sends its primary after appending change events. */
const APPENDED = 'plinth:events-appended';

function isAppended(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === APPENDED;
}

/**
 * Worker side (standalone with several workers): after each group of events this worker appends
 * to the shared log, tell the primary; when the primary relays another worker's, read the log
 * now. So an event reaches subscribers on another worker at once, not at that worker's next
 * poll (PLINTH_EVENTS_POLL_MS), which remains as the backstop. One small IPC message per group
 * appended (a group is what one turn of the event loop published). Nothing outside a worker.
 */
export function wakeOtherWorkersOnAppend(bus: EventBus): void {
  if (!cluster.isWorker || !(bus instanceof SqliteEventBus) || !process.send) return;
  bus.onAppended(() => {
    // The primary gone (shutting down): nothing to tell; the callback keeps the error quiet.
    if (process.connected) process.send!({ type: APPENDED }, undefined, {}, () => {});
  });
  process.on('message', (message) => {
    if (isAppended(message)) bus.poke();
  });
}

/** Primary side: relays each worker's "appended" to every other worker. */
export function relayAppendedEvents(): void {
  cluster.on('message', (from, message) => {
    if (!isAppended(message)) return;
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker && worker !== from && worker.isConnected()) worker.send(message, undefined, {}, () => {});
    }
  });
}
