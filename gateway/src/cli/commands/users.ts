/** `plinth users …` (secret key; Auth must be enabled on the project). */
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need, positiveInt } from './args';

export async function usersCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, id] = args;
  const user = (v: string) => conn.projectPath(`/auth/users/${encodeURIComponent(v)}`);
  switch (verb) {
    case 'list': {
      const q = new URLSearchParams();
      if (flags.search !== undefined) q.set('search', flags.search);
      const limit = positiveInt(flags.limit, '--limit');
      if (limit !== undefined) q.set('limit', String(limit));
      const qs = q.toString();
      printJson(io, await conn.ok('GET', conn.projectPath(`/auth/users${qs ? `?${qs}` : ''}`), { key: conn.requireSecretKey() }));
      return 0;
    }
    case 'disable':
    case 'enable': {
      const status = verb === 'disable' ? 'disabled' : 'active';
      printJson(io, await conn.ok('PATCH', user(need(id, 'user id')), { key: conn.requireSecretKey(), body: { status } }));
      return 0;
    }
    case 'send-reset':
      printJson(io, await conn.ok('POST', `${user(need(id, 'user id'))}/send-reset`, { key: conn.requireSecretKey() }));
      return 0;
    default:
      throw new UsageError(verb ? `unknown command: users ${verb}` : 'missing subcommand: users list|disable|enable|send-reset');
  }
}
