import type { Transport } from '../transport';
import type { TokenSource } from './types';

/** What collections and queries share: the transport, the user token, and realtime when enabled. */
export interface RecordsContext {
  transport: Transport;
  token: TokenSource;
  /** Set by `enableRealtime` from `@plinth/client/realtime`; absent otherwise. */
  realtime?: unknown;
  /** Run by the client's `close()` (timers, channels, sockets). */
  closers: Array<() => void>;
}
