import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { loadIoredis } from '@plinth/shared';

/** The Redis channel on which gateway replicas announce that project keys changed. */
export const KEY_CACHE_CHANNEL = 'plinth:gateway:keys-changed';

/**
 * Key-cache invalidation across gateway replicas (cluster mode): a revocation or project
 * deletion on one replica PUBLISHes on a Redis channel, and every replica — the one that
 * published included — drops its cached key lookups when the message arrives. A replica whose
 * subscription is down drops its cache on reconnect, since it may have missed a message.
 */
export class KeyCacheBus {
  private readonly pub: Redis;
  private readonly sub: Redis;

  private constructor(
    url: string,
    private readonly channel: string,
    onChange: () => void,
    private readonly logger: Logger,
  ) {
    this.pub = new (loadIoredis().Redis)(url, { maxRetriesPerRequest: 2 });
    this.sub = new (loadIoredis().Redis)(url);
    this.sub.on('message', (ch: string) => {
      if (ch === this.channel) onChange();
    });
    // After a reconnect, messages sent while away are lost: start from an empty cache.
    this.sub.on('ready', onChange);
    for (const c of [this.pub, this.sub]) c.on('error', (err: Error) => logger.warn({ err }, 'key cache bus: redis error'));
  }

  /** Connects and subscribes; resolves once the subscription is live. */
  static async start(url: string, onChange: () => void, logger: Logger, channel = KEY_CACHE_CHANNEL): Promise<KeyCacheBus> {
    const bus = new KeyCacheBus(url, channel, onChange, logger);
    await bus.sub.subscribe(channel);
    return bus;
  }

  /** Tells every replica to drop its key cache. Best effort: a failure is logged, and the TTL still bounds staleness. */
  async publish(): Promise<void> {
    try {
      await this.pub.publish(this.channel, String(Date.now()));
    } catch (err) {
      this.logger.warn({ err }, 'key cache bus: publish failed');
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.sub.quit(), this.pub.quit()]);
  }
}
