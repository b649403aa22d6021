import type { Session } from './types';

/** What one tab tells the others of its origin. */
export type TabMessage = { type: 'session'; session: Session } | { type: 'signed_out' };

interface ChannelLike {
  postMessage(message: unknown): void;
  close(): void;
  onmessage: ((ev: { data: unknown }) => void) | null;
  unref?: () => void;
}

interface LockManagerLike {
  request<T>(name: string, options: { signal?: AbortSignal; ifAvailable?: boolean }, callback: (lock: unknown) => Promise<T>): Promise<T>;
}

interface BrowserGlobals {
  BroadcastChannel?: new (name: string) => ChannelLike;
  navigator?: { locks?: LockManagerLike };
}

/**
 * Coordinates the tabs of one origin that share a session:
 * - `withLock` runs a refresh while holding a Web Lock, so one tab refreshes at a time. Waiting
 *   for the lock is bounded: past `lockTimeoutMs` the refresh runs without it (the server's
 *   10-second reuse window then answers a second tab with the same new session). The lock is
 *   never taken inside itself, so it cannot deadlock.
 * - `post` shares a refreshed session or a sign-out with the other tabs over BroadcastChannel.
 * Both are used only where the browser has them; elsewhere this is a no-op.
 */
export class TabSync {
  private readonly channel: ChannelLike | undefined;
  private readonly locks: LockManagerLike | undefined;

  constructor(
    private readonly name: string,
    onMessage: (m: TabMessage) => void,
    enabled: boolean,
    private readonly lockTimeoutMs = 10_000,
  ) {
    const g = globalThis as unknown as BrowserGlobals;
    this.locks = enabled ? g.navigator?.locks : undefined;
    if (enabled && typeof g.BroadcastChannel === 'function') {
      this.channel = new g.BroadcastChannel(name);
      this.channel.unref?.(); // Node: never keep the process alive
      this.channel.onmessage = (ev) => {
        const m = ev.data as TabMessage | null;
        if (m && (m.type === 'signed_out' || (m.type === 'session' && m.session && typeof m.session.refresh_token === 'string'))) onMessage(m);
      };
    }
  }

  post(message: TabMessage): void {
    this.channel?.postMessage(message);
  }

  /**
   * Runs `fn` holding the lock. `fn` learns whether another tab held the lock first
   * (`waited`): that tab may have just refreshed, and its news may still be on its way.
   */
  async withLock<T>(fn: (waited: boolean) => Promise<T>): Promise<T> {
    const locks = this.locks;
    if (!locks) return fn(false);
    const FREE = Symbol('taken');
    const free = await locks.request(this.name, { ifAvailable: true }, async (lock) => (lock ? fn(false) : FREE));
    if (free !== FREE) return free as T;
    let started = false;
    try {
      return await locks.request(this.name, { signal: AbortSignal.timeout(this.lockTimeoutMs) }, () => {
        started = true;
        return fn(true);
      });
    } catch (err) {
      if (started) throw err;
      return fn(true); // the lock could not be had in time: go on without it
    }
  }

  close(): void {
    this.channel?.close();
  }
}
