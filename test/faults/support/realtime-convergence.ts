/**
 * What the realtime fault suites share: subscribers that keep their position (seq and epoch, as
 * docs/realtime.md tells a client to) and reconnect with `resume_from`, a writer that creates
 * records at a steady rate through the gateway, and the check that every subscriber holds the
 * records as they are — from the events it was sent (each change once), or, having been told
 * `resync_required`, from the snapshot that followed and the events after it.
 */
import { startCluster, type Cluster, type ClusterOptions } from '@plinth/testing/cluster';
import { projectCall, type ProjectAccess } from '../../e2e/support/api';
import { RtClient, type Msg } from '../../../services/realtime/test/support/rt-client';

const SUB = 'f';

interface FeedEvent {
  kind: string;
  seq: number;
  record: { id: string; n?: number };
}

/** A subscriber to collection `feed` that resumes from its position when it reconnects. */
export class ResumingSubscriber {
  /** Every message of every connection, in arrival order. */
  readonly messages: Msg[] = [];
  private client: RtClient | null = null;
  private lastSeq: number | null = null;
  private epoch: string | null = null;
  private seen = 0;

  constructor(private readonly p: ProjectAccess) {}

  async connect(): Promise<void> {
    const client = await RtClient.connect(this.p.url, this.p.id, { queryKey: this.p.publicKey });
    this.client = client;
    this.seen = 0;
    const resume = this.lastSeq !== null ? { resume_from: this.lastSeq, resume_epoch: this.epoch } : {};
    const answer = await client.subscribe(SUB, { collection: 'feed', snapshot: true, limit: 1000, ...resume });
    if (answer.type !== 'subscribed') throw new Error(`subscribe answered ${JSON.stringify(answer)}`);
    this.collect();
  }

  /** Drops the connection (as a network failure would) and resumes on a new one. */
  async reconnect(): Promise<void> {
    this.collect();
    this.client?.close();
    await this.connect();
  }

  /** Takes the new messages of the current connection, keeping the position as a client does. */
  private collect(): void {
    const c = this.client;
    if (!c) return;
    for (const m of c.messages.slice(this.seen)) {
      if (m.id !== SUB) continue;
      this.messages.push(m);
      if (m.type === 'subscribed') {
        this.epoch = m.epoch as string;
        if (this.lastSeq === null || m.resumed !== true) this.lastSeq = m.seq as number;
      }
      if (m.type === 'resync_required') {
        this.epoch = m.epoch as string;
        this.lastSeq = m.seq as number;
      }
      if (m.type === 'events') for (const e of m.events as FeedEvent[]) this.lastSeq = e.seq;
    }
    this.seen = c.messages.length;
  }

  /** What the subscriber holds: the last snapshot after the last resync (or none), then the events. */
  held(): Map<string, number> {
    this.collect();
    const types = this.messages.map((m) => m.type);
    const lastResync = types.lastIndexOf('resync_required');
    const state = new Map<string, number>();
    for (const m of lastResync >= 0 ? this.messages.slice(lastResync) : this.messages) {
      if (m.type === 'snapshot') for (const r of m.records as unknown as { id: string; n: number }[]) state.set(r.id, r.n);
      if (m.type === 'events') {
        for (const e of m.events as FeedEvent[]) {
          if (e.kind === 'delete' || e.kind === 'leave') state.delete(e.record.id);
          else state.set(e.record.id, e.record.n!);
        }
      }
    }
    return state;
  }

  /** Record ids of the create events received after the last resync (or all), in order. */
  createsSinceResync(): string[] {
    this.collect();
    const lastResync = this.messages.map((m) => m.type).lastIndexOf('resync_required');
    return this.messages
      .slice(Math.max(0, lastResync))
      .filter((m) => m.type === 'events')
      .flatMap((m) => (m.events as FeedEvent[]).filter((e) => e.kind === 'create').map((e) => e.record.id));
  }

  resynced(): boolean {
    this.collect();
    return this.messages.some((m) => m.type === 'resync_required');
  }

  close(): void {
    this.client?.close();
  }
}

/** Creates `feed` records from `writers` concurrent loops (10: about 200 a second on a CI machine) until stopped; collects the acknowledged ids. */
export function startWriters(p: ProjectAccess, writers = 10): { acknowledged: string[]; stop: () => Promise<void> } {
  let stopped = false;
  let n = 0;
  const acknowledged: string[] = [];
  const loop = async () => {
    while (!stopped) {
      const i = n++;
      const res = await projectCall<{ record: { id: string } }>(p, 'POST', '/collections/feed/records', { key: p.secretKey, body: { data: { n: i } } }).catch(() => null);
      if (res?.status === 201) acknowledged.push(res.body.record.id);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const loops = Array.from({ length: writers }, loop);
  return {
    acknowledged,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Polls until `check` holds (bounded). */
export async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function createFeed(p: ProjectAccess): Promise<number> {
  const res = await projectCall(p, 'POST', '/collections', { key: p.secretKey, body: { name: 'feed', fields: { n: { type: 'integer' } }, rules: { read: 'true' } } });
  return res.status;
}

/** The stored records of `feed` (id → n), read with the secret key. */
export async function storedFeed(p: ProjectAccess): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const res = await projectCall<{ records: { id: string; n: number }[]; cursor?: string | null }>(p, 'GET', `/collections/feed/records?limit=1000${q}`, { key: p.secretKey });
    if (res.status !== 200) throw new Error(`list answered ${res.status}`);
    for (const r of res.body.records) out.set(r.id, r.n);
    cursor = res.body.cursor ?? null;
  } while (cursor);
  return out;
}

export interface Outcome {
  /** Acknowledged records the subscriber does not hold. */
  missing: string[];
  /** Records it holds that are not stored. */
  extra: string[];
  /** Creates delivered more than once since the last resync. */
  duplicates: number;
  resynced: boolean;
}

/**
 * Waits (bounded) until the subscriber holds exactly `expected`, then says how it ended. Every
 * acknowledged id must be among the stored ones (no write is answered and lost).
 */
export async function outcome(s: ResumingSubscriber, expected: Map<string, number>): Promise<Outcome> {
  const same = () => {
    const held = s.held();
    return held.size === expected.size && [...expected].every(([id, n]) => held.get(id) === n);
  };
  await until(same, 15_000).catch(() => undefined);
  const held = s.held();
  const creates = s.createsSinceResync();
  return {
    missing: [...expected.keys()].filter((id) => !held.has(id)),
    extra: [...held.keys()].filter((id) => !expected.has(id)),
    duplicates: creates.length - new Set(creates).size,
    resynced: s.resynced(),
  };
}

/** A cluster started with `opts`, and a project `name` on it that has the `feed` collection. */
export async function startFeedCluster(opts: ClusterOptions, name: string): Promise<{ cluster: Cluster; p: ProjectAccess }> {
  const cluster = await startCluster(opts);
  const p = { url: cluster.url, ...(await cluster.createProject(name)) };
  expect(await createFeed(p)).toBe(201);
  return { cluster, p };
}

/**
 * Once the writes are over: every acknowledged write is stored, and each subscriber ends holding
 * exactly the stored records, none missing, none extra, no create received twice. Closes them.
 */
export async function expectConverged(p: ProjectAccess, acknowledged: readonly string[], subs: readonly ResumingSubscriber[]): Promise<void> {
  const expected = await storedFeed(p);
  expect(acknowledged.filter((id) => !expected.has(id))).toEqual([]);
  for (const s of subs) {
    const o = await outcome(s, expected);
    expect({ missing: o.missing, extra: o.extra, duplicates: o.duplicates }).toEqual({ missing: [], extra: [], duplicates: 0 });
    s.close();
  }
}
