import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** What the bench asks of a receiving process (realtime-receiver.ts). */
export type ReceiverRequest =
  | {
      type: 'open';
      url: string;
      project: string;
      pk: string;
      collection: string;
      /** One entry per connection: its user token (or null) and the owner every record it receives must have (or null). */
      connections: Array<{ token: string | null; owner: string | null }>;
    }
  /** Starts counting (and, when `timing`, timing) from zero, and the CPU measurement. */
  | { type: 'reset'; timing: boolean }
  | { type: 'report' }
  /** How many events were delivered since the reset (nothing else). */
  | { type: 'count' }
  | { type: 'close' };

export type ReceiverReport =
  | { type: 'opened' }
  | { type: 'failed'; message: string }
  | { type: 'reset' }
  | {
      type: 'report';
      /** Arrival minus send time of every timed event, ms (one per event and connection). */
      latencies: number[];
      /** Arrival minus the record's `created_at` (server wall clock at the write), ms, per delivery. */
      fromCommit: number[];
      delivered: number;
      misdelivered: number;
      /** CPU this process used since the reset, ms, and the wall time, ms. */
      cpuMs: number;
      wallMs: number;
    }
  | { type: 'counted'; delivered: number }
  | { type: 'closed' };

export interface ReceiversResult {
  latencies: number[];
  fromCommit: number[];
  delivered: number;
  misdelivered: number;
  /** Each receiving process's CPU since the reset, % of one core. */
  cpuPercent: number[];
  /** Their CPU since the reset, summed, ms. */
  cpuMs: number;
}

/**
 * The receiving side of the realtime bench, spread over `count` processes: the connections are
 * dealt out round-robin, so no single event loop times every receipt of an event one after the
 * other (with 1,000 subscribers, the last receipt would wait behind 999 callbacks). Each process
 * times its own receipts against the send time carried in the record (realtime-clock.ts).
 */
export class Receivers {
  private readonly children: ChildProcess[];

  constructor(count: number) {
    const entry = path.join(__dirname, 'realtime-receiver.js');
    this.children = Array.from({ length: count }, () => fork(entry, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  }

  private ask(child: ChildProcess, req: ReceiverRequest, answer: ReceiverReport['type']): Promise<ReceiverReport> {
    return new Promise((resolve, reject) => {
      const onMessage = (msg: ReceiverReport) => {
        if (msg.type === 'failed') {
          child.off('message', onMessage);
          reject(new Error(`receiver: ${msg.message}`));
        } else if (msg.type === answer) {
          child.off('message', onMessage);
          resolve(msg);
        }
      };
      child.on('message', onMessage);
      child.send(req);
    });
  }

  private all(req: ReceiverRequest, answer: ReceiverReport['type']): Promise<ReceiverReport[]> {
    return Promise.all(this.children.map((c) => this.ask(c, req, answer)));
  }

  async open(target: Omit<Extract<ReceiverRequest, { type: 'open' }>, 'type' | 'connections'>, connections: Array<{ token: string | null; owner: string | null }>): Promise<void> {
    const n = this.children.length;
    await Promise.all(
      this.children.map((c, k) => this.ask(c, { type: 'open', ...target, connections: connections.filter((_, i) => i % n === k) }, 'opened')),
    );
  }

  async reset(timing: boolean): Promise<void> {
    await this.all({ type: 'reset', timing }, 'reset');
  }

  async report(): Promise<ReceiversResult> {
    const reports = (await this.all({ type: 'report' }, 'report')) as Array<Extract<ReceiverReport, { type: 'report' }>>;
    const latencies: number[] = [];
    const fromCommit: number[] = [];
    for (const r of reports) for (const l of r.latencies) latencies.push(l);
    for (const r of reports) for (const l of r.fromCommit) fromCommit.push(l);
    return {
      latencies,
      fromCommit,
      delivered: reports.reduce((s, r) => s + r.delivered, 0),
      misdelivered: reports.reduce((s, r) => s + r.misdelivered, 0),
      cpuPercent: reports.map((r) => (r.cpuMs / r.wallMs) * 100),
      cpuMs: reports.reduce((s, r) => s + r.cpuMs, 0),
    };
  }

  /** Waits until `expected` events were delivered since the reset, or `ms` passed; resolves with the count. */
  async drained(expected: number, ms = 30_000): Promise<number> {
    const deadline = Date.now() + ms;
    for (;;) {
      const counts = (await this.all({ type: 'count' }, 'counted')) as Array<Extract<ReceiverReport, { type: 'counted' }>>;
      const delivered = counts.reduce((s, c) => s + c.delivered, 0);
      if (delivered >= expected || Date.now() > deadline) return delivered;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async closeConnections(): Promise<void> {
    await this.all({ type: 'close' }, 'closed');
  }

  /** Lets each process exit by itself (so a --cpu-prof profile is written); kills one that has not within 2 s. */
  stop(): void {
    for (const c of this.children) {
      if (c.connected) c.disconnect();
      setTimeout(() => c.exitCode === null && c.signalCode === null && c.kill(), 2000).unref();
    }
  }
}
