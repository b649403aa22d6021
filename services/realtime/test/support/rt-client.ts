/**
 * A realtime test client on the real `ws` package: connects through the gateway, records every
 * server message, and waits for the ones a test expects (bounded waits, never sleeps to pass).
 */
import { WebSocket } from 'ws';
import type { DeliveredEvent, ServerMessage } from '@plinth/realtime';

export type Msg = ServerMessage & { [k: string]: unknown };

export interface ConnectOptions {
  /** A public key sent as `?key=`. */
  queryKey?: string;
  /** Any key sent as `Authorization: Bearer`. */
  headerKey?: string;
  /** Answer the server's pings (default true, as browsers do). */
  autoPong?: boolean;
  /** Wait for the server's `welcome` (default true). */
  welcome?: boolean;
}

/** The refusal of an upgrade: HTTP status and JSON body. */
export interface Refusal {
  status: number;
  body: { error: string; message: string; details?: unknown };
}

export function wsUrl(httpUrl: string, project: string, opts: ConnectOptions): string {
  const q = opts.queryKey ? `?key=${encodeURIComponent(opts.queryKey)}` : '';
  return `${httpUrl.replace(/^http/, 'ws')}/v1/projects/${project}/realtime${q}`;
}

/** Tries to connect; resolves with the refusal when the upgrade is answered with an HTTP error. */
export function refusal(url: string, headers: Record<string, string> = {}): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      reject(new Error('the upgrade was accepted'));
    });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Refusal['body'] }));
    });
    ws.on('error', () => {});
  });
}

export class RtClient {
  readonly messages: Msg[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()) as Msg);
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    this.closed.then(() => {
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** Connects and waits for the server's `welcome`. */
  static async connect(httpUrl: string, project: string, opts: ConnectOptions): Promise<RtClient> {
    const headers: Record<string, string> = opts.headerKey ? { Authorization: `Bearer ${opts.headerKey}` } : {};
    const ws = new WebSocket(wsUrl(httpUrl, project, opts), { headers, autoPong: opts.autoPong ?? true });
    const client = new RtClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_q, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    if (opts.welcome !== false) await client.next((m) => m.type === 'welcome');
    return client;
  }

  /** Wraps a socket opened elsewhere (e.g. straight to a service) and waits for `welcome`. */
  static async wrap(ws: WebSocket): Promise<RtClient> {
    const client = new RtClient(ws);
    await client.next((m) => m.type === 'welcome');
    return client;
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  /** The first message (from the start) matching `pred`, waiting up to `ms` for it. */
  async next(pred: (m: Msg) => boolean, ms = 10_000): Promise<Msg> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.messages.find(pred);
      if (found) return found;
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error(`connection closed while waiting; got ${JSON.stringify(this.messages.slice(-5))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting; last messages ${JSON.stringify(this.messages.slice(-5))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a subscribe and waits for `subscribed` (or the error) for it. */
  async subscribe(id: string, body: Record<string, unknown>): Promise<Msg> {
    this.send({ type: 'subscribe', id, ...body });
    return this.next((m) => (m.type === 'subscribed' || m.type === 'error') && m.id === id);
  }

  /** Every event delivered to subscription `id`, in arrival order. */
  events(id: string): DeliveredEvent[] {
    return this.messages.filter((m) => m.type === 'events' && m.id === id).flatMap((m) => (m as { events: DeliveredEvent[] }).events);
  }

  async waitForEvents(id: string, n: number, ms = 10_000): Promise<DeliveredEvent[]> {
    await this.next(() => this.events(id).length >= n, ms);
    return this.events(id);
  }

  close(): void {
    this.ws.terminate();
  }
}
