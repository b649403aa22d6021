import type { Transport } from '../transport';
import type { RealtimeHook } from './realtime-types';
import type { TokenSource } from './types';

/** What collections and queries share: the transport, the user token, and realtime when enabled. */
export interface RecordsContext {
  transport: Transport;
  token: TokenSource;
  /** Set by `enableRealtime` from `@plinth/client/realtime`; absent otherwise. */
  realtime?: RealtimeHook;
  /** Tells of every new access token (refresh, sign-in: the token; sign-out: null); absent without Auth. */
  onToken?: (listener: (token: string | null) => void) => () => void;
  /** Run by the client's `close()` (timers, channels, sockets). */
  closers: Array<() => void>;
}
