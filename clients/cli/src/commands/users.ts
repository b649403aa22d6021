/** `plinth users …` (secret key, `@plinth/client/admin`; Auth must be enabled on the project). */
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need, positiveInt } from './args';

export async function usersCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, id] = args;
  switch (verb) {
    case 'list': {
      const limit = positiveInt(flags.limit, '--limit');
      printJson(io, await conn.admin().users.list({ search: flags.search, limit }));
      return 0;
    }
    case 'disable':
    case 'enable': {
      const userId = need(id, 'user id');
      printJson(io, { user: await conn.admin().users.update(userId, { status: verb === 'disable' ? 'disabled' : 'active' }) });
      return 0;
    }
    case 'send-reset':
      await conn.admin().users.sendPasswordReset(need(id, 'user id'));
      printJson(io, { sent: true });
      return 0;
    default:
      throw new UsageError(verb ? `unknown command: users ${verb}` : 'missing subcommand: users list|disable|enable|send-reset');
  }
}
