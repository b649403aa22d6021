import type { Logger } from 'pino';
import type { EventBus, ResolveSubscription } from '@plinth/shared';
import type { CatchUpBudget } from './catch-up';
import type { CatchUpGate } from './catch-up-gate';
import type { ConnectionQuotas } from './connection-quotas';
import type { LookupIndex } from './lookup-index';
import type { RealtimeMetrics } from './metrics';
import type { RealtimeLimits } from './realtime-limits';
import type { Subscription } from './subscription';

/**
 * What a connection needs of the replica that holds it (the hub implements it): the event log,
 * subscription resolution, limits, metrics, quotas, and the index of subscriptions by
 * collection. Generic in the connection type, so neither file imports the other's class.
 */
export interface ConnectionHost<C extends { readonly project: string }> {
  readonly bus: EventBus;
  readonly resolve: ResolveSubscription;
  readonly limits: RealtimeLimits;
  readonly metrics: RealtimeMetrics;
  readonly logger: Logger;
  readonly catchUps: CatchUpGate;
  readonly quotas: ConnectionQuotas;
  readonly lookups: LookupIndex<C>;
  /** What a catch-up of `conn` reads is charged to. */
  catchUpBudget(conn: C): CatchUpBudget;
  /** Starts routing events of the subscription's collection to it. */
  index(conn: C, sub: Subscription): void;
  unindex(conn: C, sub: Subscription): void;
  /** Closes a connection whose send buffer passed the limit. */
  dropSlowConsumer(conn: C): void;
}
