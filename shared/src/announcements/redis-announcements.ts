import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { REQUEST_REDIS_OPTIONS, loadIoredis } from '../redis';
import { asAnnouncement, Listeners, type Announcement, type AnnouncementListener, type Announcements } from './announcements';

/** The Redis channel of announcements (cluster). Renaming it splits a deployment mid-upgrade. */
export const ANNOUNCEMENTS_CHANNEL = 'plinth:announcements';

/**
 * Announcements across cluster replicas on Redis pub/sub. Every replica of every service
 * subscribes; a replica whose subscription was down hears `missed` when it is live again, since
 * it may have lost messages meanwhile.
 */
export class RedisAnnouncements implements Announcements {
  private readonly listeners = new Listeners();
  private readonly pub: Redis;
  private readonly sub: Redis;
  private subscribedOnce = false;

  private constructor(url: string, private readonly channel: string, logger?: Logger) {
    const { Redis: Client } = loadIoredis();
    this.pub = new Client(url, REQUEST_REDIS_OPTIONS);
    this.sub = new Client(url, { retryStrategy: REQUEST_REDIS_OPTIONS.retryStrategy });
    this.sub.on('message', (ch: string, text: string) => {
      if (ch === this.channel) this.receive(text);
    });
    // ioredis re-subscribes on reconnect and then emits `ready`: what was sent meanwhile is lost.
    this.sub.on('ready', () => {
      if (this.subscribedOnce) this.listeners.tell({ kind: 'missed' });
    });
    for (const c of [this.pub, this.sub]) c.on('error', (err: Error) => logger?.warn({ err: err.message }, 'announcements: redis error'));
  }

  /** Connects and subscribes; resolves once the subscription is live. */
  static async start(url: string, logger?: Logger, channel = ANNOUNCEMENTS_CHANNEL): Promise<RedisAnnouncements> {
    const bus = new RedisAnnouncements(url, channel, logger);
    await bus.sub.subscribe(channel);
    bus.subscribedOnce = true;
    return bus;
  }

  private receive(text: string): void {
    let parsed: { kind?: unknown; project?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      return;
    }
    const a = asAnnouncement(parsed?.kind, parsed?.project);
    if (a) this.listeners.tell(a);
  }

  async publish(a: Announcement): Promise<void> {
    this.listeners.tell(a);
    await this.pub.publish(this.channel, JSON.stringify({ kind: a.kind, project: a.project }));
  }

  subscribe(listener: AnnouncementListener): () => void {
    return this.listeners.add(listener);
  }

  /** Messages arrive on their own, a round trip after they were published. */
  catchUp(): void {}

  async close(): Promise<void> {
    await Promise.allSettled([this.sub.quit(), this.pub.quit()]);
  }
}
