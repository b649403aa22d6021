import type { Subscription } from './subscription';

/** What a resync of every subscription needs from its connection (connection.ts). */
export interface Resyncing {
  resync(sub: Subscription, stale: () => boolean, opening: boolean): Promise<void>;
  goLive(sub: Subscription, stale: () => boolean): Promise<void>;
  fail(sub: Subscription, err: unknown): void;
}

/**
 * The log's tail could not vouch for what it delivered (a gap, or a new epoch: docs/realtime.md
 * "Positions and epochs"): every started subscription that is live or catching up gets
 * `resync_required` and a fresh snapshot, then goes on live. What an earlier resolution was
 * doing stops at its next wait (a new attempt). A paused one resyncs when it resumes: its epoch
 * no longer matches the log's.
 */
export function resyncAll(conn: Resyncing, subs: Subscription[]): void {
  for (const sub of subs) {
    if ((sub.state !== 'live' && sub.state !== 'pending') || !sub.started) continue;
    const attempt = ++sub.attempt;
    const stale = () => sub.ended || sub.attempt !== attempt;
    sub.state = 'pending';
    sub.buffer = [];
    sub.overflowed = false;
    void (async () => {
      await conn.resync(sub, stale, false);
      if (!stale()) await conn.goLive(sub, stale);
    })().catch((err: unknown) => {
      if (!stale()) conn.fail(sub, err);
    });
  }
}
