import type { CatchUpLimits } from './catch-up';
import type { CatchUpGateLimits } from './catch-up-gate';
import type { ConnectionQuotaLimits } from './connection-quotas';

/** The bounds of one realtime replica (config.ts reads them from the environment). */
export interface RealtimeLimits {
  /** One catch-up (a resume replay), and how many may run at once. */
  catchUp: CatchUpLimits;
  catchUpGate: CatchUpGateLimits;
  /** Stored bytes of history replayed per minute, per connection and per project. */
  catchUpBytesPerMinute: { connection: number; project: number };
  maxMessageBytes: number;
  maxBufferedBytes: number;
  maxSubscriptionsPerConnection: number;
  /** Connection quotas (per process, project, public key, address, user). */
  quotas: ConnectionQuotaLimits;
  /** Messages per second a connection may send (pings included), and its burst. */
  messagesPerSecond: number;
  messageBurst: number;
  pingIntervalMs: number;
  idleTimeoutMs: number;
  revocationCheckMs: number;
}
