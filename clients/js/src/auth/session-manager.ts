import { PlinthError, isNetworkError } from '../errors';
import type { SessionStorage } from '../storage';
import type { Transport } from '../transport';
import { TabSync, type TabMessage } from './tab-sync';
import type { AuthEvent, AuthListener, Session } from './types';

export interface SessionOptions {
  storage: SessionStorage;
  storageKey: string;
  /** Refresh when fewer than this many seconds of the access token remain (default: 60, at most half its lifetime). */
  refreshMargin?: number;
  /** Refresh on a timer before expiry (default true); otherwise only when a call needs a token. */
  autoRefresh: boolean;
  /** Share the session with other tabs (Web Locks + BroadcastChannel where present; default true). */
  multiTab: boolean;
}

function parse(raw: string | null): Session | null {
  if (!raw) return null;
  try {
    const s = JSON.parse(raw) as Session;
    return s && typeof s.access_token === 'string' && typeof s.refresh_token === 'string' && typeof s.expires_at === 'string' ? s : null;
  } catch {
    return null;
  }
}

/** How long a refresh that waited for the lock waits for the lock holder's news before sending. */
const TAB_NEWS_WAIT_MS = 150;

/** Rewrites `expires_at` on this device's clock, so a skewed clock never makes a token look fresh. */
function received(s: Session): Session {
  return { ...s, expires_at: new Date(Date.now() + s.expires_in * 1000).toISOString() };
}

/** Rejects with the signal's reason when it aborts first; the shared work goes on. */
function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Holds the session: in the storage (the source of truth, re-read before each use so another
 * tab's refresh is seen), refreshed before expiry by one tab at a time, shared across tabs.
 */
export class SessionManager {
  private cache: Session | null = null;
  /**
   * The newest session another tab announced (BroadcastChannel), kept the moment it arrives.
   * A browser's localStorage is not always consistent across tabs at once (Chromium propagates a
   * write to other tabs' copies a little later): right after taking the lock from a tab that
   * just refreshed, this tab may still read the old session from the storage.
   */
  private heard: Session | null = null;
  /** Refreshes waiting for another tab's news (see newsAfter). */
  private readonly waiting = new Set<(m: TabMessage) => void>();
  private inflight: Promise<Session | null> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly listeners = new Set<AuthListener>();
  private readonly sync: TabSync;

  constructor(
    private readonly transport: Transport,
    private readonly opts: SessionOptions,
  ) {
    this.sync = new TabSync(
      `plinth:${opts.storageKey}`,
      (m) => {
        this.hear(m);
        void this.onTabMessage(m);
      },
      opts.multiTab,
    );
    // Pick up a stored session (a reload, another tab's sign-in) and plan its refresh.
    this.current().catch(() => undefined);
  }

  /** The last session seen, without reading the storage (may be stale by one refresh). */
  get cached(): Session | null {
    return this.cache;
  }

  onChange(listener: AuthListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The stored session, or null. */
  async current(): Promise<Session | null> {
    const s = parse(await this.opts.storage.getItem(this.opts.storageKey));
    this.observe(s);
    return s;
  }

  /** An access token valid for at least the refresh margin (refreshing first if needed), or null when signed out. */
  async accessToken(signal?: AbortSignal): Promise<string | null> {
    const s = await this.current();
    if (!s) return null;
    if (!this.needsRefresh(s)) return s.access_token;
    try {
      const next = await abortable(this.refresh(s.refresh_token), signal);
      return next?.access_token ?? null;
    } catch (err) {
      // No answer from the refresh: the old token still works until it expires.
      if (isNetworkError(err) && Date.parse(s.expires_at) > Date.now()) return s.access_token;
      throw err;
    }
  }

  /**
   * Refreshes the session, once for all callers of this tab and (with Web Locks) of every tab.
   * `stale` is the refresh token the caller saw: when the storage already holds a newer, fresh
   * session (another tab refreshed it), that one is used and nothing is sent.
   */
  refresh(stale: string | null): Promise<Session | null> {
    if (!this.inflight) {
      this.inflight = this.sync.withLock((waited) => this.refreshLocked(stale, waited)).finally(() => {
        this.inflight = null;
      });
    }
    return this.inflight;
  }

  private async refreshLocked(stale: string | null, waited: boolean): Promise<Session | null> {
    let stored = await this.current();
    if (!stored) return null;
    // Another tab held the lock first and the storage here still shows the token this tab saw:
    // that tab may have refreshed it a moment ago. Its message comes soon if so.
    if (waited && stored.refresh_token === stale) await this.newsAfter(stored, TAB_NEWS_WAIT_MS);
    const heard = this.heard;
    if (heard && heard.user.id === stored.user.id && Date.parse(heard.expires_at) > Date.parse(stored.expires_at)) {
      // Another tab refreshed and said so; its write to the storage has not reached this tab yet.
      await this.opts.storage.setItem(this.opts.storageKey, JSON.stringify(heard));
      this.observe(heard);
      stored = heard;
    }
    if (stored.refresh_token !== stale && !this.needsRefresh(stored)) return stored;
    let next: Session;
    try {
      next = await this.transport.request<Session>({
        method: 'POST',
        path: '/auth/refresh',
        body: { refresh_token: stored.refresh_token },
        signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      if (err instanceof PlinthError && err.status === 401) {
        await this.clear(); // the session ended (signed out elsewhere, revoked, expired)
        return null;
      }
      throw err;
    }
    return this.save(next, 'refreshed');
  }

  /** Stores a session the server just issued, tells the other tabs, and plans its refresh. */
  async save(session: Session, event: AuthEvent): Promise<Session> {
    const s = received(session);
    await this.opts.storage.setItem(this.opts.storageKey, JSON.stringify(s));
    this.set(s, event);
    this.sync.post({ type: 'session', session: s });
    return s;
  }

  /** Keeps the stored session but with a changed user (profile, e-mail), shared with the other tabs. */
  async replaceUser(user: Session['user']): Promise<void> {
    const s = await this.current();
    if (!s || s.user.id !== user.id) return;
    const next = { ...s, user };
    await this.opts.storage.setItem(this.opts.storageKey, JSON.stringify(next));
    this.cache = next;
    this.sync.post({ type: 'session', session: next });
  }

  /** Forgets the session here and in every tab. */
  async clear(): Promise<void> {
    this.heard = null;
    await this.opts.storage.removeItem(this.opts.storageKey);
    this.set(null, 'signed_out');
    this.sync.post({ type: 'signed_out' });
  }

  /** Stops the refresh timer and the tab channel. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.sync.close();
  }

  /** Keeps the newest session another tab announced; forgets it when a tab signs out. */
  private hear(m: TabMessage): void {
    if (m.type === 'signed_out') {
      this.heard = null;
    } else if (!this.heard || Date.parse(m.session.expires_at) > Date.parse(this.heard.expires_at)) {
      this.heard = m.session;
    }
    for (const wake of this.waiting) wake(m);
  }

  /** Resolves once another tab announced a session newer than `than` or a sign-out, or after `ms`. */
  private newsAfter(than: Session, ms: number): Promise<void> {
    const newer = (): boolean => this.heard !== null && Date.parse(this.heard.expires_at) > Date.parse(than.expires_at);
    if (newer()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve();
      };
      const wake = (m: TabMessage): void => {
        if (m.type === 'signed_out' || newer()) done();
      };
      const timer = setTimeout(done, ms);
      this.waiting.add(wake);
    });
  }

  private async onTabMessage(m: TabMessage): Promise<void> {
    const stored = parse(await this.opts.storage.getItem(this.opts.storageKey));
    if (m.type === 'signed_out') {
      if (stored) await this.opts.storage.removeItem(this.opts.storageKey);
      this.set(null, 'signed_out');
      return;
    }
    // Only ever move forward: a late message about an older session must not replace a newer one.
    if (stored && Date.parse(stored.expires_at) >= Date.parse(m.session.expires_at)) {
      this.observe(stored);
      return;
    }
    await this.opts.storage.setItem(this.opts.storageKey, JSON.stringify(m.session));
    this.observe(m.session);
  }

  private margin(s: Session): number {
    const m = this.opts.refreshMargin ?? Math.min(60, s.expires_in / 2);
    return Math.min(m, Math.max(0, s.expires_in - 1));
  }

  private needsRefresh(s: Session): boolean {
    return Date.parse(s.expires_at) - Date.now() < this.margin(s) * 1000;
  }

  /** Notes a session read from storage or another tab, telling listeners what changed. */
  private observe(s: Session | null): void {
    const before = this.cache;
    if (before?.refresh_token === s?.refresh_token && before?.access_token === s?.access_token) {
      this.cache = s; // same session; the user may have changed (profile, e-mail)
      return;
    }
    this.set(s, !s ? 'signed_out' : before ? 'refreshed' : 'signed_in');
  }

  private set(s: Session | null, event: AuthEvent): void {
    const before = this.cache;
    this.cache = s;
    this.schedule();
    if (!before && !s) return;
    for (const l of this.listeners) {
      try {
        l(event, s);
      } catch {
        /* a listener's error is its own */
      }
    }
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const s = this.cache;
    if (!s || !this.opts.autoRefresh) return;
    const due = Date.parse(s.expires_at) - this.margin(s) * 1000 - Date.now();
    const jitter = Math.random() * Math.min(500, s.expires_in * 10);
    this.timer = setTimeout(() => {
      this.refresh(s.refresh_token).catch(() => {
        // No answer: try again soon (the token may still be valid for a while).
        this.timer = setTimeout(() => this.schedule(), 2_000);
        (this.timer as { unref?: () => void }).unref?.();
      });
    }, Math.max(0, due) + jitter);
    (this.timer as { unref?: () => void }).unref?.();
  }
}
