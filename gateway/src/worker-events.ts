import cluster from 'node:cluster';
import { SqliteEventBus, type EventBus } from '@plinth/shared';
import { leadingAndTrailingPerTurn } from './per-turn';

/** The message a standalone worker sends its primary after appending change events. */
const APPENDED = 'plinth:events-appended';

function isAppended(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === APPENDED;
}

/**
 * Worker side (standalone with several workers): after this worker appends change events to the
 * shared log, tell the primary; when the primary relays another worker's, read the log now. So
 * an event reaches subscribers on another worker at once, not at that worker's next poll
 * (PLINTH_EVENTS_POLL_MS), which remains as the backstop. Nothing outside a worker.
 *
 * At most two messages per turn of the event loop, however many writes committed in it
 * (per-turn.ts): the first append is told at once (the other workers start their fan-out while
 * this one does its own), later ones in the same turn once, when the turn ends. The other
 * workers read everything committed up to then, so none is left for the poll. Under a burst of
 * creates the IPC (a write here, a read and a relay in the primary, a read in each other worker)
 * is paid at most twice per turn, not once per create.
 */
export function wakeOtherWorkersOnAppend(bus: EventBus): void {
  if (!cluster.isWorker || !(bus instanceof SqliteEventBus) || !process.send) return;
  // The primary gone (shutting down): nothing to tell; the callback keeps the error quiet.
  bus.onAppended(
    leadingAndTrailingPerTurn(() => {
      if (process.connected) process.send!({ type: APPENDED }, undefined, {}, () => {});
    }),
  );
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
