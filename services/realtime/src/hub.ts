import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  INTERNAL_HEADERS,
  PlinthError,
  UnauthorizedError,
  isInProcess,
  isKeyKind,
  isProjectId,
  optionalIdentity,
  type NonceStore,
  type ChangeEvent,
  type EventBus,
  type KeyKind,
  type ProjectId,
  type ResolveSubscription,
  type RevocationChecker,
} from '@plinth/shared';
import type { CatchUpBudget } from './catch-up';
import { CatchUpGate } from './catch-up-gate';
import { Connection } from './connection';
import type { ConnectionHost } from './connection-host';
import { ConnectionQuotas } from './connection-quotas';
import { TokenBucket } from './token-bucket';
import { UpgradeCredentials } from './upgrade-credential';
import type { RealtimeMetrics } from './metrics';
import { refusalMessage } from './outbound';
import { CLOSE } from './protocol';
import type { Subscription } from './subscription';
import { LookupIndex } from './lookup-index';
import type { RealtimeLimits } from './realtime-limits';
import { clientAddress, REALTIME_PATH, refuseUpgrade } from './upgrade-request';

export interface HubDeps {
  bus: EventBus;
  resolve: ResolveSubscription;
  /** Sessions ended by sign-out, disable, delete or reset (auth's revocation markers). */
  revocations?: RevocationChecker;
  limits: RealtimeLimits;
  metrics: RealtimeMetrics;
  logger: Logger;
  internalSecret: string;
  /** Cluster: nonces of accepted internal credentials, shared by every replica (Redis). */
  nonceStore?: NonceStore;
}

/**
 * The realtime hub of one replica: accepts WebSocket upgrades, tails the EventBus once, routes
 * each event to the subscriptions of its project and collection (an index, then an in-memory
 * predicate match), and runs heartbeats and revocation checks.
 */
export class Hub implements ConnectionHost<Connection> {
  readonly bus: EventBus;
  readonly resolve: ResolveSubscription;
  readonly limits: RealtimeLimits;
  readonly metrics: RealtimeMetrics;
  readonly logger: Logger;
  readonly catchUps: CatchUpGate;
  private readonly catchUpBytesByProject = new Map<string, TokenBucket>();
  private readonly wss: WebSocketServer;
  private readonly byCollection = new Map<string, Set<{ conn: Connection; sub: Subscription }>>();
  /** Subscriptions by the records their read rule looked up (lookup-index.ts). */
  readonly lookups = new LookupIndex<Connection>();
  private readonly entries = new WeakMap<Subscription, { conn: Connection; sub: Subscription }>();
  private readonly connections = new Set<Connection>();
  readonly quotas: ConnectionQuotas;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly credentials: UpgradeCredentials;
  private stopTail: (() => void) | null = null;
  private checkingRevocations = false;
  private checkingPurges = false;
  private closing = false;

  constructor(private readonly deps: HubDeps) {
    this.bus = deps.bus;
    this.resolve = deps.resolve;
    this.limits = deps.limits;
    this.metrics = deps.metrics;
    this.logger = deps.logger;
    this.catchUps = new CatchUpGate(deps.limits.catchUpGate);
    this.credentials = new UpgradeCredentials(deps.internalSecret, deps.nonceStore);
    this.quotas = new ConnectionQuotas(deps.limits.quotas, { processFull: CLOSE.serverFull, quota: CLOSE.tooManyConnections });
    this.wss = new WebSocketServer({ noServer: true, maxPayload: deps.limits.maxMessageBytes, clientTracking: false });
  }

  /** Starts tailing the bus and the periodic checks. Resolves once the tail is positioned. */
  async start(): Promise<void> {
    // Without a subscription on this replica every event would be dropped: let the bus skip them.
    this.stopTail = await this.bus.tail(
      (events) => this.onEvents(events),
      () => this.byCollection.size > 0,
      (reason) => this.onReset(reason),
    );
    this.timers.push(setInterval(() => this.heartbeat(), this.limits.pingIntervalMs));
    if (this.deps.revocations) this.timers.push(setInterval(() => void this.checkRevocations(), this.limits.revocationCheckMs));
    this.timers.push(setInterval(() => void this.checkPurges(), this.limits.revocationCheckMs));
    for (const t of this.timers) t.unref?.();
  }

  /**
   * Handles `GET /v1/projects/{p}/realtime` with `Upgrade: websocket`. The gateway has checked
   * the project key and set the identity headers; a request without a valid internal
   * credential (or the in-process mark) is refused with 401, and so is a credential any replica
   * accepted before (the shared nonce store; while it cannot answer, only a credential made in
   * the last few seconds is accepted, else 503).
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.closing) {
      refuseUpgrade(socket, new PlinthError('unavailable', 'This realtime replica is shutting down; connect again.'));
      return;
    }
    const m = REALTIME_PATH.exec(req.url ?? '');
    const h = req.headers;
    const project = h[INTERNAL_HEADERS.project];
    const keyKind = h[INTERNAL_HEADERS.keyKind];
    const requestId = h[INTERNAL_HEADERS.requestId];
    const credential = h[INTERNAL_HEADERS.credential];
    // The key id and client address the gateway signed with the rest.
    const optional = optionalIdentity(h);
    if (!m) {
      refuseUpgrade(socket, new PlinthError('not_found', 'Connect to /v1/projects/{project}/realtime.'));
      return;
    }
    const refuse = () => refuseUpgrade(socket, new UnauthorizedError('This service only accepts connections from the Plinth gateway.'));
    if (
      typeof project !== 'string' ||
      !isProjectId(project) ||
      m[1] !== project ||
      !isKeyKind(keyKind) ||
      keyKind === 'none' ||
      typeof requestId !== 'string' ||
      optional === null
    ) {
      refuse();
      return;
    }
    const checked = isInProcess(req)
      ? Promise.resolve('accepted' as const)
      : this.credentials.check(req, credential, { project, keyKind, requestId, ...optional });
    void checked.then((check) => {
      if (check === 'refused') refuse();
      else if (check === 'unavailable') refuseUpgrade(socket, new PlinthError('unavailable', 'This replica cannot check its internal credentials right now.'));
      else this.open(req, socket, head, project as ProjectId, keyKind);
    });
  }

  private open(req: IncomingMessage, socket: Duplex, head: Buffer, project: ProjectId, keyKind: KeyKind): void {
    // The log's head before accepting: a purge of the project after this point closes the connection.
    this.bus.head(project).then(
      (openedAt) => {
        if (this.closing) refuseUpgrade(socket, new PlinthError('unavailable', 'This realtime replica is shutting down; connect again.'));
        else this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws, project, keyKind, openedAt, clientAddress(req)));
      },
      () => refuseUpgrade(socket, new PlinthError('unavailable', 'The event log cannot be reached; connect again.')),
    );
  }

  private attach(ws: WebSocket, project: ProjectId, keyKind: KeyKind, openedAt: number, address: string): void {
    const conn = new Connection(ws, project, keyKind, address, this);
    conn.openedAt = openedAt;
    const refused = this.quotas.admit(conn);
    if (refused) {
      conn.send(refusalMessage(refused));
      conn.close(refused.code, refused.code === CLOSE.serverFull ? 'server full' : 'too many connections');
      return;
    }
    this.connections.add(conn);
    this.metrics.connections.inc();
    // Every message and every ping frame takes a token; past the burst the connection is closed.
    const rate = new TokenBucket(this.limits.messageBurst, this.limits.messagesPerSecond);
    const allowed = (): boolean => {
      if (rate.take()) return true;
      conn.tooManyMessages();
      return false;
    };
    ws.on('message', (data, isBinary) => {
      if (conn.closed || !allowed()) return;
      if (isBinary) {
        conn.send({ type: 'error', error: 'invalid_request', message: 'Send JSON text messages, not binary.' });
        return;
      }
      void conn.onMessage(data.toString()).catch((err: unknown) => this.logger.error({ err }, 'message handling failed'));
    });
    ws.on('ping', () => void (!conn.closed && allowed()));
    ws.on('pong', () => (conn.lastSeen = Date.now()));
    ws.on('error', () => {});
    ws.once('close', () => {
      conn.dispose();
      this.connections.delete(conn);
      this.metrics.connections.dec();
      this.quotas.release(conn);
      if (this.quotas.ofProject(project) === 0) this.catchUpBytesByProject.delete(project);
    });
    conn.send({ type: 'welcome', connection_id: conn.id, heartbeat_ms: this.limits.pingIntervalMs });
  }

  /** What a catch-up of `conn` reads is charged to the connection and to its project. */
  catchUpBudget(conn: Connection): CatchUpBudget {
    let project = this.catchUpBytesByProject.get(conn.project);
    if (!project) {
      const perMinute = this.limits.catchUpBytesPerMinute.project;
      this.catchUpBytesByProject.set(conn.project, (project = new TokenBucket(perMinute, perMinute / 60)));
    }
    const shared = project;
    return {
      covers: (bytes) => conn.catchUpBytes.has(bytes) && shared.has(bytes),
      spend: (bytes) => {
        conn.catchUpBytes.spend(bytes);
        shared.spend(bytes);
      },
    };
  }

  index(conn: Connection, sub: Subscription): void {
    const key = `${conn.project}\n${sub.collection}`;
    let set = this.byCollection.get(key);
    if (!set) this.byCollection.set(key, (set = new Set()));
    const entry = { conn, sub };
    this.entries.set(sub, entry);
    set.add(entry);
    this.metrics.subscriptions.inc();
  }

  unindex(conn: Connection, sub: Subscription): void {
    const key = `${conn.project}\n${sub.collection}`;
    this.lookups.remove(sub);
    const entry = this.entries.get(sub);
    const set = this.byCollection.get(key);
    if (!entry || !set?.delete(entry)) return;
    if (set.size === 0) this.byCollection.delete(key);
    this.metrics.subscriptions.dec();
  }

  /** The tail saw a gap or a new epoch: every subscription resyncs (docs/realtime.md). */
  private onReset(reason: 'gap' | 'epoch'): void {
    this.logger.warn({ reason }, 'event log reset: subscriptions resync');
    for (const conn of this.connections) if (!conn.closed) conn.resetAll();
  }

  /** Routes a batch from the tail: per subscription, one `events` message for the batch. */
  private onEvents(events: ChangeEvent[]): void {
    // A record a read rule looked up changed: those subscriptions are resolved again.
    for (const { conn, sub } of this.lookups.affected(events)) void conn.follow(sub);
    const grouped = new Map<string, ChangeEvent[]>();
    for (const e of events) {
      const key = `${e.project}\n${e.collection}`;
      if (!this.byCollection.has(key)) continue;
      let list = grouped.get(key);
      if (!list) grouped.set(key, (list = []));
      list.push(e);
    }
    for (const [key, list] of grouped) {
      const set = this.byCollection.get(key);
      if (!set) continue;
      for (const { conn, sub } of [...set]) {
        if (sub.state === 'live') conn.deliver(sub, list);
        else if (sub.state === 'pending') for (const e of list) sub.hold(e);
      }
    }
  }

  dropSlowConsumer(conn: Connection): void {
    if (conn.closed) return;
    this.metrics.slowConsumers.inc();
    this.logger.warn({ connection: conn.id, project: conn.project }, 'slow consumer dropped');
    conn.dispose();
    conn.close(CLOSE.slowConsumer, 'slow consumer');
  }

  private heartbeat(): void {
    const now = Date.now();
    for (const conn of this.connections) {
      if (conn.closed) continue;
      if (now - conn.lastSeen > this.limits.idleTimeoutMs) {
        conn.dispose();
        conn.close(CLOSE.idle, 'idle timeout');
      } else {
        conn.ws.ping();
      }
    }
  }

  /** Every signed-in connection's session, checked against the revocation markers. */
  private async checkRevocations(): Promise<void> {
    const checker = this.deps.revocations;
    if (!checker || this.checkingRevocations) return;
    this.checkingRevocations = true;
    try {
      // One check per session, however many connections it has.
      const bySession = new Map<string, Connection[]>();
      for (const conn of this.connections) {
        const c = conn.claims;
        if (!c?.sid || conn.closed) continue;
        const key = `${conn.project}\n${c.sid}\n${c.iat}`;
        const list = bySession.get(key);
        if (list) list.push(conn);
        else bySession.set(key, [conn]);
      }
      await Promise.all(
        [...bySession.values()].map(async (conns) => {
          const first = conns[0]!;
          const { sid, iat } = first.claims!;
          const tokens = conns.map((c) => c.token);
          if (!(await checker.isRevoked(first.project, sid!, iat))) return;
          // A connection that sent another token meanwhile is not revoked by this answer.
          conns.forEach((conn, i) => {
            if (conn.token === tokens[i]) conn.revoke();
          });
        }),
      );
    } catch (err) {
      this.logger.warn({ err }, 'revocation check failed');
    } finally {
      this.checkingRevocations = false;
    }
  }

  /**
   * Backstop for a replica the gateway's purge call did not reach (several pods behind one
   * Service URL): a connection opened before its project's latest purge point is closed as in
   * closeProject. One lookup per project with connections.
   */
  private async checkPurges(): Promise<void> {
    if (this.checkingPurges) return;
    this.checkingPurges = true;
    try {
      const projects = new Set([...this.connections].map((conn) => conn.project));
      await Promise.all(
        [...projects].map(async (project) => {
          const through = await this.bus.purgedThrough(project);
          if (through === 0) return;
          for (const conn of this.connections) {
            if (conn.project !== project || conn.closed || conn.openedAt >= through) continue;
            conn.dispose();
            conn.close(CLOSE.projectDeleted, 'project deleted');
          }
        }),
      );
    } catch (err) {
      this.logger.warn({ err }, 'purge check failed');
    } finally {
      this.checkingPurges = false;
    }
  }

  /**
   * The project was deleted: closes its connections with 4004 "project deleted" (their
   * subscriptions and per-project counts go with them) and resolves once they are closed, so a
   * connection of the old tenant never sees an event of a project re-created with the same id.
   */
  async closeProject(project: ProjectId): Promise<void> {
    const conns = [...this.connections].filter((conn) => conn.project === project);
    const closed = conns
      .filter((conn) => conn.ws.readyState !== conn.ws.CLOSED)
      .map((conn) => new Promise<void>((r) => conn.ws.once('close', () => r())));
    for (const conn of conns) {
      conn.dispose();
      conn.close(CLOSE.projectDeleted, 'project deleted');
    }
    // A peer that does not answer the close frame: `ws` ends the socket after its own timeout.
    await Promise.all(closed);
  }

  /** Closes every connection with 1001 (clients reconnect and resume elsewhere) and stops. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const t of this.timers) clearInterval(t);
    this.stopTail?.();
    const closed = [...this.connections]
      .filter((conn) => conn.ws.readyState !== conn.ws.CLOSED)
      .map((conn) => new Promise<void>((r) => conn.ws.once('close', () => r())));
    for (const conn of this.connections) {
      conn.dispose();
      conn.close(CLOSE.goingAway, 'server shutting down');
    }
    this.wss.close();
    await Promise.all(closed);
  }
}
