import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The realtime service's own metrics, on the service's registry (/metrics). */
export function realtimeMetrics(registry: Registry) {
  const registers = [registry];
  return {
    connections: new Gauge({ name: 'plinth_realtime_connections', help: 'Open WebSocket connections.', registers }),
    subscriptions: new Gauge({ name: 'plinth_realtime_subscriptions', help: 'Active subscriptions.', registers }),
    matched: new Counter({ name: 'plinth_realtime_events_matched_total', help: 'Events that matched a subscription.', registers }),
    delivered: new Counter({ name: 'plinth_realtime_events_delivered_total', help: 'Events sent to clients.', registers }),
    slowConsumers: new Counter({
      name: 'plinth_realtime_slow_consumers_dropped_total',
      help: 'Connections closed (4008) because their send buffer passed the limit.',
      registers,
    }),
    latency: new Histogram({
      name: 'plinth_realtime_delivery_latency_seconds',
      help: 'From the commit of a change to its send to a client.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
  };
}

export type RealtimeMetrics = ReturnType<typeof realtimeMetrics>;
