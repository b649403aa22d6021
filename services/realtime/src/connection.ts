import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { InvalidRequestError, NotFoundError, PlinthError, type ChangeEvent, type KeyKind, type ProjectId } from '@plinth/shared';
import { resyncAll } from './resync-all';
import { catchUp, type CatchUpOutcome } from './catch-up';
import { deliveryFor } from './matching';
import { errorMessage, messageRateMessage, refusalMessage } from './outbound';
import { SocketSender } from './socket-sender';
import { CLOSE, parseClientMessage, type DeliveredEvent, type ServerMessage, type SubscribeMessage } from './protocol';
import { Subscription } from './subscription';
import { readClaims, type TokenClaims } from './token-claims';
import { TokenBucket } from './token-bucket';
import { TokenExpiry } from './token-expiry';
import type { ConnectionHost } from './connection-host';

/** One client WebSocket: its identity, token, subscriptions and send path. */
export class Connection {
  readonly id = randomUUID();
  readonly subs = new Map<string, Subscription>();
  token: string | null = null;
  claims: TokenClaims | null = null;
  /** The user this connection counts against (a token records verified), or null. */
  user: string | null = null;
  lastSeen = Date.now();
  /** The event log's head when the connection was accepted (a later purge of the project closes it). */
  openedAt = 0;
  closed = false;
  /** Stored bytes of history this connection may still replay (docs/realtime.md "Resume"). */
  readonly catchUpBytes: TokenBucket;
  private readonly expiry = new TokenExpiry(() => this.expire());
  private readonly out: SocketSender;

  constructor(
    readonly ws: WebSocket,
    readonly project: ProjectId,
    readonly keyKind: KeyKind,
    /** The client's address (the per-address connection quota). */
    readonly address: string,
    private readonly hub: ConnectionHost<Connection>,
  ) {
    const perMinute = hub.limits.catchUpBytesPerMinute.connection;
    this.catchUpBytes = new TokenBucket(perMinute, perMinute / 60);
    this.out = new SocketSender(ws, hub.limits.maxBufferedBytes, hub.metrics, () => this.closed, () => hub.dropSlowConsumer(this));
  }

  /** Sends one message unless the send buffer would pass the limit; then drops the client (4008). */
  send(msg: ServerMessage): boolean {
    return this.out.send(msg);
  }

  /** One `events` message (socket-sender.ts). */
  sendEvents(sub: Subscription, events: DeliveredEvent[], committedAt: number[]): void {
    if (sub.state !== 'ended') this.out.events(sub.id, events, committedAt);
  }

  async onMessage(text: string): Promise<void> {
    this.lastSeen = Date.now();
    let msg;
    try {
      msg = parseClientMessage(text);
    } catch (err) {
      this.send(errorMessage(err));
      return;
    }
    switch (msg.type) {
      case 'ping':
        this.send({ type: 'pong' });
        return;
      case 'auth':
        await this.authenticate(msg.token);
        return;
      case 'unsubscribe': {
        const sub = this.subs.get(msg.id);
        if (!sub) {
          this.send(errorMessage(new NotFoundError(`No subscription "${msg.id}".`, { id: msg.id }), msg.id));
          return;
        }
        this.end(sub);
        this.send({ type: 'unsubscribed', id: msg.id });
        return;
      }
      case 'subscribe':
        await this.subscribe(msg);
        return;
    }
  }

  /**
   * Sets (or clears, with null) the user token. The connection's identity changes: every
   * subscription — also one still resolving — is resolved again under the new one, and whatever
   * was under way for the old one stops (its answer is never used).
   */
  private async authenticate(token: string | null): Promise<void> {
    this.token = token;
    this.claims = token ? readClaims(token) : null;
    // Counted against a user again once records has verified the new token (resolve).
    if (this.user !== null && this.user !== this.claims?.sub) this.hub.quotas.signIn(this, null);
    this.expiry.arm(this.claims?.exp);
    this.send({
      type: 'auth_ok',
      user_id: this.claims?.sub ?? null,
      expires_at: this.claims?.exp ? new Date(this.claims.exp * 1000).toISOString() : null,
    });
    await Promise.all([...this.subs.values()].map((sub) => this.start(sub)));
  }

  /** The access token expired: token-shaped subscriptions (also resolving ones) pause until the next `auth`. */
  private expire(): void {
    const paused: string[] = [];
    for (const sub of this.subs.values()) {
      if (sub.withToken && sub.state !== 'ended') {
        sub.attempt++; // a resolution under way stops
        sub.state = 'paused';
        sub.buffer = [];
        paused.push(sub.id);
      }
    }
    this.send({ type: 'auth_expired', paused });
  }

  /** The session was revoked: token-shaped subscriptions (also resolving ones) end, the connection becomes anonymous. */
  revoke(): void {
    const ended = [...this.subs.values()].filter((s) => s.withToken).map((s) => s.id);
    for (const id of ended) this.end(this.subs.get(id)!);
    this.token = null;
    this.claims = null;
    this.hub.quotas.signIn(this, null);
    this.expiry.clear();
    this.send({ type: 'auth_revoked', ended });
  }

  private async subscribe(msg: SubscribeMessage): Promise<void> {
    if (this.subs.has(msg.id)) {
      this.send(errorMessage(new InvalidRequestError(`Subscription "${msg.id}" already exists on this connection.`, { field: 'id' }), msg.id));
      return;
    }
    const max = this.hub.limits.maxSubscriptionsPerConnection;
    if (this.subs.size >= max) {
      this.send(errorMessage(new PlinthError('rate_limited', `A connection may hold at most ${max} subscriptions.`, { limit: max }), msg.id));
      return;
    }
    const sub = new Subscription(msg.id, msg.collection, msg);
    this.subs.set(sub.id, sub);
    this.hub.index(this, sub);
    await this.start(sub);
  }

  /**
   * (Re)starts a subscription under the connection's current token: the first time as the
   * client asked (snapshot, resume_from), later from where it stopped. A resolution started
   * earlier stops at its next wait (`stale`).
   */
  private async start(sub: Subscription, followed = false): Promise<void> {
    if (sub.ended) return;
    const attempt = ++sub.attempt;
    const stale = () => sub.ended || sub.attempt !== attempt;
    sub.state = 'pending';
    sub.withToken = this.token !== null && this.keyKind !== 'secret';
    try {
      if (sub.started) await this.reopen(sub, stale, followed);
      else await this.open(sub, stale);
    } catch (err) {
      if (!stale()) this.fail(sub, err);
    }
  }

  /** First resolution: `subscribed`, then the snapshot or the replay from `resume_from`, then live. */
  private async open(sub: Subscription, stale: () => boolean): Promise<void> {
    const resume = sub.request.resume_from;
    const epoch = await this.hub.bus.epoch();
    const head = await this.hub.bus.head(this.project);
    if (stale()) return;
    const answer = await this.resolve(sub, resume === undefined && sub.request.snapshot === true, stale);
    if (stale()) return;
    // A position only means something in the epoch it was read in: from another one (or from a
    // client that did not say), the history cannot be vouched for.
    sub.epoch = epoch;
    const outcome =
      resume !== undefined && (sub.request.resume_epoch !== epoch || epoch === '')
        ? ({ outcome: 'resync' } as const)
        : await this.replay(sub, resume ?? head, resume !== undefined, stale);
    if (outcome.outcome === 'stale') return;
    if (outcome.outcome === 'resync') {
      await this.resync(sub, stale, true);
      if (stale()) return;
      return this.goLive(sub, stale);
    }
    const resumed = resume !== undefined && outcome.outcome === 'replayed';
    sub.started = true;
    sub.lastSeq = resumed ? resume : head;
    this.send({ type: 'subscribed', id: sub.id, collection: answer.collection, revision: answer.revision, seq: sub.lastSeq, epoch, expires_at: answer.expires_at, resumed });
    if (outcome.outcome === 'resubscribe') return this.resubscribe(sub, outcome.reason);
    if (answer.snapshot) this.send({ type: 'snapshot', id: sub.id, records: answer.snapshot.records, cursor: answer.snapshot.cursor });
    this.sendEvents(sub, outcome.events, outcome.committedAt);
    sub.lastSeq = outcome.next;
    await this.goLive(sub, stale);
  }

  /** A record its read rule looked up changed (lookup-index.ts): resolve again (a paused one resolves on its next `auth`). */
  follow(sub: Subscription): Promise<void> {
    return sub.started && sub.state !== 'paused' ? this.start(sub, true) : Promise.resolve();
  }

  /** A new token, a new `auth` after expiry, or (`followed`) a looked-up record changed: resolve again; a changed view is resent whole. */
  private async reopen(sub: Subscription, stale: () => boolean, followed = false): Promise<void> {
    const was = JSON.stringify(sub.predicate);
    await this.resolve(sub, false, stale);
    if (stale()) return;
    if (followed && JSON.stringify(sub.predicate) !== was) {
      await this.resync(sub, stale, false, 'lookup_changed');
      if (!stale()) await this.goLive(sub, stale);
      return;
    }
    if ((await this.catchUpTo(sub, true, stale)) && !stale()) await this.goLive(sub, stale);
  }

  /** Replays what came after `lastSeq` (or resyncs); false when the subscription went stale or was sent to resubscribe. */
  private async catchUpTo(sub: Subscription, fromClient: boolean, stale: () => boolean): Promise<boolean> {
    const outcome = await this.replay(sub, sub.lastSeq, fromClient, stale);
    if (outcome.outcome === 'stale') return false;
    if (outcome.outcome === 'resubscribe') {
      this.resubscribe(sub, outcome.reason);
      return false;
    }
    if (outcome.outcome === 'resync') await this.resync(sub, stale, false);
    else {
      this.sendEvents(sub, outcome.events, outcome.committedAt);
      sub.lastSeq = outcome.next;
    }
    return true;
  }

  /** Sends the live events held meanwhile (seq > lastSeq); re-reads the log first if they overflowed. */
  async goLive(sub: Subscription, stale: () => boolean): Promise<void> {
    while (sub.overflowed) {
      sub.overflowed = false;
      sub.buffer = [];
      if (!(await this.catchUpTo(sub, false, stale)) || stale()) return;
    }
    const held = sub.buffer;
    sub.buffer = [];
    sub.state = 'live';
    this.deliver(sub, held);
  }

  /**
   * The log after `after` for this subscription, bounded (catch-up.ts). A replay from the
   * client's position takes a turn at the gate (per connection, project and process); one that
   * gets none in time is answered with a resync.
   */
  private async replay(sub: Subscription, after: number, fromClient: boolean, stale: () => boolean): Promise<CatchUpOutcome> {
    const release = fromClient ? await this.hub.catchUps.acquire(this.project, this.id) : () => {};
    if (stale()) {
      release?.();
      return { outcome: 'stale' };
    }
    if (!release) return { outcome: 'resync' };
    try {
      return await catchUp({
        bus: this.hub.bus,
        project: this.project,
        collection: sub.collection,
        after,
        epoch: sub.epoch,
        predicate: sub.predicate,
        revision: sub.revision,
        fromClient,
        limits: this.hub.limits.catchUp,
        budget: this.hub.catchUpBudget(this),
        stale,
      });
    } finally {
      release();
    }
  }

  /** Asks records for the rule-checked predicate with the connection's key and current token. */
  private async resolve(sub: Subscription, snapshot: boolean, stale: () => boolean) {
    const { where, orderBy, direction, limit, expand } = sub.request;
    const user = this.token !== null && this.keyKind !== 'secret' ? (this.claims?.sub ?? null) : null;
    const answer = await this.hub.resolve({
      project: this.project,
      keyKind: this.keyKind,
      ...(this.token ? { userToken: this.token } : {}),
      collection: sub.collection,
      body: { where, orderBy, direction, limit, snapshot, expand },
    });
    // An answer made under an older token (a newer resolution started meanwhile) is dropped:
    // it must never replace the predicate of the one under the connection's current token.
    if (stale()) return answer;
    sub.revision = answer.revision;
    sub.predicate = answer.predicate;
    this.hub.lookups.set(this, sub, answer.lookups ?? []);
    // The token is verified: the connection now counts against its user's share.
    const refused = user === null ? null : this.hub.quotas.signIn(this, user);
    if (refused) {
      this.send(refusalMessage(refused));
      this.close(refused.code, 'too many connections');
      throw new PlinthError('rate_limited', refused.message, { limit: refused.limit });
    }
    return answer;
  }

  /** History cannot be replayed: tell the client, send a fresh snapshot, continue from the head. */
  async resync(sub: Subscription, stale: () => boolean, opening: boolean, reason?: 'lookup_changed'): Promise<void> {
    const epoch = await this.hub.bus.epoch();
    const head = await this.hub.bus.head(this.project);
    if (stale()) return;
    const answer = await this.resolve(sub, true, stale);
    if (stale()) return;
    sub.epoch = epoch;
    if (opening) {
      sub.started = true;
      this.send({ type: 'subscribed', id: sub.id, collection: answer.collection, revision: answer.revision, seq: head, epoch, expires_at: answer.expires_at, resumed: false });
    }
    this.send({ type: 'resync_required', id: sub.id, seq: head, epoch, ...(reason ? { reason } : {}) });
    if (answer.snapshot) this.send({ type: 'snapshot', id: sub.id, records: answer.snapshot.records, cursor: answer.snapshot.cursor });
    sub.lastSeq = head;
  }

  /** The log's tail could not vouch for what it delivered: every subscription resyncs (resync-all.ts). */
  resetAll(): void {
    resyncAll(this, [...this.subs.values()]);
  }

  private resubscribe(sub: Subscription, reason: 'collection_changed' | 'collection_deleted'): void {
    this.end(sub);
    this.send({ type: 'resubscribe', id: sub.id, reason });
  }

  /**
   * Matches live events of the subscription's collection (in seq order) and sends what it should
   * see. A collection change newer than the resolved revision ends it with `resubscribe`.
   */
  deliver(sub: Subscription, events: ChangeEvent[]): void {
    const out: DeliveredEvent[] = [];
    const committed: number[] = [];
    for (const e of events) {
      if (e.seq <= sub.lastSeq) continue;
      if (e.kind === 'collection') {
        const revision = e.revision ?? null;
        if (revision === null || revision > sub.revision) {
          this.sendEvents(sub, out, committed);
          this.end(sub);
          this.send({ type: 'resubscribe', id: sub.id, reason: revision === null ? 'collection_deleted' : 'collection_changed' });
          return;
        }
        continue;
      }
      sub.lastSeq = e.seq;
      const d = deliveryFor(e, sub.predicate);
      if (d) {
        out.push(d);
        committed.push(e.committed_at);
      }
    }
    if (out.length) this.hub.metrics.matched.inc(out.length);
    this.sendEvents(sub, out, committed);
  }

  fail(sub: Subscription, err: unknown): void {
    if (!(err instanceof PlinthError)) this.hub.logger.error({ err, sub: sub.id }, 'subscription failed');
    if (sub.ended) return;
    this.end(sub);
    this.send(errorMessage(err, sub.id));
  }

  end(sub: Subscription): void {
    if (sub.ended) return;
    sub.state = 'ended';
    sub.buffer = [];
    this.subs.delete(sub.id);
    this.hub.unindex(this, sub);
  }

  /** More messages than the connection's rate allows: told once, then closed (4009). */
  tooManyMessages(): void {
    if (this.closed) return;
    this.send(messageRateMessage(this.hub.limits.messagesPerSecond, this.hub.limits.messageBurst));
    this.dispose();
    this.close(CLOSE.tooManyMessages, 'too many messages');
  }

  /** Releases everything; called once when the socket closed. */
  dispose(): void {
    this.closed = true;
    this.expiry.clear();
    for (const sub of [...this.subs.values()]) this.end(sub);
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === this.ws.CLOSED) return;
    this.closed = true;
    this.ws.close(code, reason);
    // A client that does not answer the close handshake is cut off.
    setTimeout(() => this.ws.terminate(), code === CLOSE.slowConsumer ? 5000 : 1000).unref?.();
  }
}
