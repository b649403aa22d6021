/** `plinth webhooks …` (secret key): list webhooks, their deliveries and dead letters, replay one. */
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need, positiveInt } from './args';

const STATUSES = ['pending', 'delivered', 'dead'];

export async function webhooksCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, id, delivery] = args;
  const hook = (v: string) => conn.projectPath(`/webhooks/${encodeURIComponent(v)}`);
  switch (verb) {
    case 'list':
      printJson(io, await conn.ok('GET', conn.projectPath('/webhooks'), { key: conn.requireSecretKey() }));
      return 0;
    case 'deliveries': {
      const q = new URLSearchParams();
      if (flags.status !== undefined) {
        if (!STATUSES.includes(flags.status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
        q.set('status', flags.status);
      }
      const limit = positiveInt(flags.limit, '--limit');
      if (limit !== undefined) q.set('limit', String(limit));
      const qs = q.toString();
      printJson(io, await conn.ok('GET', `${hook(need(id, 'webhook id'))}/deliveries${qs ? `?${qs}` : ''}`, { key: conn.requireSecretKey() }));
      return 0;
    }
    case 'replay': {
      const path = `${hook(need(id, 'webhook id'))}/deliveries/${encodeURIComponent(need(delivery, 'delivery id'))}/replay`;
      printJson(io, await conn.ok('POST', path, { key: conn.requireSecretKey() }));
      return 0;
    }
    default:
      throw new UsageError(verb ? `unknown command: webhooks ${verb}` : 'missing subcommand: webhooks list|deliveries|replay');
  }
}
