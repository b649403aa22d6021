/** `plinth webhooks …` (secret key, `@plinth/client/admin`): list webhooks, their deliveries and dead letters, replay one. */
import type { WebhookDelivery } from '@plinth/client/admin';
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need, positiveInt } from './args';

const STATUSES: readonly WebhookDelivery['status'][] = ['pending', 'delivered', 'dead'];
const isStatus = (s: string): s is WebhookDelivery['status'] => (STATUSES as readonly string[]).includes(s);

export async function webhooksCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, id, delivery] = args;
  switch (verb) {
    case 'list':
      printJson(io, { webhooks: await conn.admin().webhooks.list() });
      return 0;
    case 'deliveries': {
      const status = flags.status;
      if (status !== undefined && !isStatus(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
      const limit = positiveInt(flags.limit, '--limit');
      const hook = need(id, 'webhook id');
      printJson(io, { deliveries: await conn.admin().webhooks.deliveries(hook, { status, limit }) });
      return 0;
    }
    case 'replay': {
      const hook = need(id, 'webhook id');
      printJson(io, { delivery: await conn.admin().webhooks.replay(hook, need(delivery, 'delivery id')) });
      return 0;
    }
    default:
      throw new UsageError(verb ? `unknown command: webhooks ${verb}` : 'missing subcommand: webhooks list|deliveries|replay');
  }
}
