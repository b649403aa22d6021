import type { ChangeEvent, Predicate } from '@plinth/shared';
import type { SubscribeMessage } from './protocol';

/** Live events a subscription holds while it catches up; beyond this it re-reads the log instead. */
export const MAX_PENDING_EVENTS = 10_000;

/**
 * One client subscription on one connection.
 *
 * - `pending`: being resolved (under the connection's current token) or catching up from the
 *   log; live events are held in `buffer`.
 * - `live`: events are matched and sent as they arrive.
 * - `paused`: the access token expired; nothing is sent, `lastSeq` stays, a new `auth` resumes
 *   from it through the log (gap-free).
 * - `ended`: unsubscribed, or ended by the server.
 */
export class Subscription {
  state: 'pending' | 'live' | 'paused' | 'ended' = 'pending';
  /** The last seq this subscription has considered (sent or skipped as not matching). */
  lastSeq = 0;
  /** The epoch of the log `lastSeq` was read in (docs/realtime.md "Positions and epochs"). */
  epoch = '';
  revision = 0;
  predicate: Predicate = false;
  /**
   * Made with a user token: ends on revocation, pauses on expiry. Set when a resolution starts
   * (not when it answers), so a revocation or expiry also reaches a subscription still resolving.
   */
  withToken = false;
  /**
   * Counts the resolutions started (subscribe, a new token, resuming after expiry). Each one
   * checks it after every wait and stops when a newer one started: only the resolution made
   * under the connection's latest token ever sends or goes live.
   */
  attempt = 0;
  /** `subscribed` was sent. */
  started = false;
  buffer: ChangeEvent[] = [];
  /** More live events arrived while pending than the buffer holds: re-read them from the log. */
  overflowed = false;

  constructor(
    readonly id: string,
    readonly collection: string,
    /** The client's request, kept to re-resolve it (token refresh, expiry). */
    readonly request: SubscribeMessage,
  ) {}

  /** Re-read after every await: another message or the server may have ended it meanwhile. */
  get ended(): boolean {
    return this.state === 'ended';
  }

  /** Holds a live event while pending. */
  hold(event: ChangeEvent): void {
    if (this.buffer.length >= MAX_PENDING_EVENTS) {
      this.overflowed = true;
      this.buffer = [];
      return;
    }
    if (!this.overflowed) this.buffer.push(event);
  }
}
