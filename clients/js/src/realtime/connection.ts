import type { ServerMessage } from '@plinth/protocol';
import { PlinthError } from '../errors';
import type { RecordsContext } from '../records/context';
import type { QuerySpec } from '../records/types';
import type { RealtimeEvent, RealtimeHook, SubscribeOptions, Unsubscribe } from '../records/realtime-types';
import type { PlinthRecord } from '../records/types';

/** The part of a WebSocket this client uses: the browser's, Node 22's, or the `ws` package's. */
export interface WebSocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** A WebSocket constructor. The second argument (`{ headers }`) is used only with a secret key (the `ws` package takes it). */
export type WebSocketConstructor = new (url: string, options?: { headers: Record<string, string> }) => WebSocketLike;

export interface RealtimeOptions {
  /** The gateway URL for WebSockets when it is not the client's `url` (default: the client's `url`). */
  url?: string;
  /** The WebSocket to use; default the global one (browsers, Node ≥ 22). On Node 20: `WebSocket` from `ws`. */
  WebSocket?: WebSocketConstructor;
  /** First reconnect delay in ms (default 250); doubles per failed attempt, with jitter. */
  minReconnectDelayMs?: number;
  /** Longest reconnect delay in ms (default 15000). */
  maxReconnectDelayMs?: number;
}

interface Sub {
  id: string;
  spec: QuerySpec;
  handler: (event: RealtimeEvent<object>) => void;
  snapshot: boolean;
  /** The last seq seen: every later change is delivered once, across reconnects. */
  lastSeq: number | null;
  /** The epoch of the log `lastSeq` belongs to (sent back with it: another epoch resyncs). */
  epoch?: string;
}

/**
 * One WebSocket per client, shared by all of its subscriptions. On every (re)connect it first
 * sends `auth` with a token taken fresh from the session (refreshed if due — never a stale one),
 * then re-subscribes each subscription with `resume_from` its last seq, so nothing is lost or
 * delivered twice. A refreshed token is sent in-band (`auth`) without reconnecting. Reconnects
 * back off exponentially with jitter.
 */
export class RealtimeConnection implements RealtimeHook {
  private ws: WebSocketLike | undefined;
  private ready = false;
  private sentToken: string | null | undefined;
  private readonly subs = new Map<string, Sub>();
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private nextId = 0;
  private readonly offToken: (() => void) | undefined;
  private readonly WS: WebSocketConstructor;

  constructor(
    private readonly ctx: RecordsContext,
    private readonly opts: RealtimeOptions = {},
  ) {
    const WS = opts.WebSocket ?? (globalThis as unknown as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WS) throw new Error('Plinth realtime needs a WebSocket: pass { WebSocket } (e.g. from the `ws` package on Node 20).');
    this.WS = WS;
    this.offToken = ctx.onToken?.((token) => {
      if (this.ready && token !== this.sentToken) this.sendAuth(token);
    });
  }

  subscribe(spec: QuerySpec, handler: (event: RealtimeEvent<object>) => void, opts: SubscribeOptions): Unsubscribe {
    if (this.closed) throw new Error('This Plinth client is closed.');
    const sub: Sub = { id: `s${++this.nextId}`, spec, handler, snapshot: opts.snapshot === true, lastSeq: null };
    this.subs.set(sub.id, sub);
    if (this.ready) this.sendSubscribe(sub);
    else if (!this.ws && this.timer === undefined) this.connect();
    return () => this.unsubscribe(sub.id);
  }

  /** Closes the socket for good (the client's `close()` calls it). */
  close(): void {
    this.closed = true;
    this.offToken?.();
    this.subs.clear();
    this.drop();
  }

  private unsubscribe(id: string): void {
    if (!this.subs.delete(id)) return;
    if (this.ready) this.send({ type: 'unsubscribe', id });
    if (this.subs.size === 0) this.drop();
  }

  private drop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const ws = this.ws;
    this.ws = undefined;
    this.ready = false;
    ws?.close(1000);
  }

  private connect(): void {
    const t = this.ctx.transport;
    const base = `${(this.opts.url ?? t.url).replace(/\/+$/, '').replace(/^http/, 'ws')}/v1/projects/${encodeURIComponent(t.project)}/realtime`;
    // Only a public key may travel in a URL; a secret key goes in a header (servers, `ws`).
    const ws = t.key.startsWith('sk_')
      ? new this.WS(base, { headers: { Authorization: `Bearer ${t.key}` } })
      : new this.WS(`${base}?key=${encodeURIComponent(t.key)}`);
    this.ws = ws;
    ws.onopen = () => void this.onOpen(ws);
    ws.onmessage = (ev) => {
      if (ws === this.ws) this.onMessage(typeof ev.data === 'string' ? ev.data : String(ev.data));
    };
    ws.onclose = () => this.onClose(ws);
    ws.onerror = () => undefined; // a close follows
  }

  private async onOpen(ws: WebSocketLike): Promise<void> {
    let token: string | null;
    try {
      token = await this.ctx.token();
    } catch {
      ws.close(4000); // no token to be had now (network): try again later
      return;
    }
    if (ws !== this.ws) return;
    this.sendAuth(token);
    this.ready = true;
    for (const sub of this.subs.values()) this.sendSubscribe(sub);
  }

  private onClose(ws: WebSocketLike): void {
    if (ws !== this.ws) return;
    this.ws = undefined;
    this.ready = false;
    if (this.closed || this.subs.size === 0) return;
    const min = this.opts.minReconnectDelayMs ?? 250;
    const max = this.opts.maxReconnectDelayMs ?? 15_000;
    const ceiling = Math.min(max, min * 2 ** this.attempt++);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        if (!this.closed && this.subs.size > 0) this.connect();
      },
      ceiling / 2 + (Math.random() * ceiling) / 2,
    );
  }

  private onMessage(text: string): void {
    let m: ServerMessage;
    try {
      m = JSON.parse(text) as ServerMessage;
    } catch {
      return;
    }
    switch (m.type) {
      case 'subscribed': {
        this.attempt = 0;
        const sub = this.subs.get(m.id);
        if (!sub) return;
        if (sub.lastSeq === null) sub.lastSeq = m.seq;
        sub.epoch = m.epoch;
        return;
      }
      case 'snapshot':
        this.subs.get(m.id)?.handler({ kind: 'snapshot', records: m.records, cursor: m.cursor });
        return;
      case 'events': {
        const sub = this.subs.get(m.id);
        if (!sub) return;
        for (const e of m.events) {
          if (sub.lastSeq !== null && e.seq <= sub.lastSeq) continue; // already delivered
          sub.lastSeq = e.seq;
          // create, update, enter: the whole record; delete: the record as it was (only id and version when replayed after it was gone)
          sub.handler(e.kind === 'leave' ? { kind: 'leave', seq: e.seq, record: { id: e.record.id, version: e.record.version } } : { kind: e.kind, seq: e.seq, record: e.record as PlinthRecord<object> });
          if (!this.subs.has(sub.id)) return; // the handler unsubscribed
        }
        return;
      }
      case 'resync_required': {
        const sub = this.subs.get(m.id);
        if (sub) {
          sub.lastSeq = m.seq; // a fresh snapshot follows
          sub.epoch = m.epoch;
        }
        return;
      }
      case 'resubscribe': {
        const sub = this.subs.get(m.id);
        if (!sub) return;
        sub.lastSeq = null;
        sub.snapshot = true; // what it may see changed: start again from a snapshot
        this.sendSubscribe(sub);
        return;
      }
      case 'auth_expired':
        void this.ctx.token().then(
          (token) => this.ready && this.sendAuth(token),
          () => undefined,
        );
        return;
      case 'auth_revoked':
        for (const id of m.ended) this.fail(id, new PlinthError({ status: 401, code: 'unauthorized', message: 'The session ended, and with it this subscription.' }));
        return;
      case 'error':
        if (m.id !== undefined) this.fail(m.id, new PlinthError({ status: statusOf(m.error), code: m.error, message: m.message, details: m.details }));
        return;
      default:
        return;
    }
  }

  private fail(id: string, error: PlinthError): void {
    const sub = this.subs.get(id);
    if (!sub) return;
    this.subs.delete(id);
    sub.handler({ kind: 'error', error });
    if (this.subs.size === 0) this.drop();
  }

  private sendAuth(token: string | null): void {
    this.sentToken = token;
    this.send({ type: 'auth', token });
  }

  private sendSubscribe(sub: Sub): void {
    const s = sub.spec;
    this.send({
      type: 'subscribe',
      id: sub.id,
      collection: s.collection,
      where: s.where.length ? s.where : undefined,
      orderBy: s.orderBy,
      direction: s.direction,
      limit: s.limit,
      snapshot: sub.lastSeq === null && sub.snapshot ? true : undefined,
      expand: s.expand?.length ? s.expand.join(',') : undefined,
      resume_from: sub.lastSeq ?? undefined,
      resume_epoch: sub.lastSeq === null ? undefined : sub.epoch,
    });
  }

  private send(message: object): void {
    try {
      this.ws?.send(JSON.stringify(message));
    } catch {
      /* the socket is closing: the reconnect re-sends what matters */
    }
  }
}

const STATUS: Record<string, number> = { invalid_request: 400, unauthorized: 401, forbidden: 403, not_found: 404, conflict: 409, rate_limited: 429, unavailable: 503 };

function statusOf(code: string): number {
  return STATUS[code] ?? 500;
}
