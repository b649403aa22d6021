/** `plinth operators …`, `plinth sessions …` and `plinth audit`: named operators over the operator API. */
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need } from './args';

interface OperatorView {
  id: string;
  email: string;
}

/** The first line of stdin (a password piped in), without its line end. */
async function firstLineOfStdin(io: CliIo): Promise<string> {
  const stream = io.stdin ?? process.stdin;
  let text = '';
  for await (const chunk of stream) {
    text += String(chunk);
    if (text.includes('\n') || text.length > 1000) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

/** An operator's id, given its id or its e-mail. */
async function operatorId(conn: Connection, key: string, who: string): Promise<string> {
  if (!who.includes('@')) return who;
  const { operators } = await conn.ok<{ operators: OperatorView[] }>('GET', '/v1/admin/operators', { key });
  const found = operators.find((o) => o.email === who.trim().toLowerCase());
  if (!found) throw new UsageError(`no operator with e-mail ${who}`);
  return found.id;
}

export async function operatorsCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, who, role] = args;
  const key = conn.requireAdminKey();
  const one = async () => `/v1/admin/operators/${encodeURIComponent(await operatorId(conn, key, need(who, 'operator id or e-mail')))}`;
  switch (verb) {
    case 'create': {
      if (!flags.email || !flags.role) throw new UsageError('operators create needs --email and --role');
      const password = flags['password-stdin'] ? await firstLineOfStdin(io) : io.env.PLINTH_OPERATOR_PASSWORD;
      if (!password) throw new UsageError('no password: pipe it with --password-stdin or set PLINTH_OPERATOR_PASSWORD');
      printJson(io, await conn.ok('POST', '/v1/admin/operators', { key, body: { email: flags.email, role: flags.role, password } }));
      return 0;
    }
    case 'list':
      printJson(io, await conn.ok('GET', '/v1/admin/operators', { key }));
      return 0;
    case 'disable':
    case 'enable':
      printJson(io, await conn.ok('PATCH', await one(), { key, body: { status: verb === 'disable' ? 'disabled' : 'active' } }));
      return 0;
    case 'set-role':
      printJson(io, await conn.ok('PATCH', await one(), { key, body: { role: need(role, 'role (owner, admin or viewer)') } }));
      return 0;
    case 'reset-totp':
      printJson(io, await conn.ok('DELETE', `${await one()}/totp`, { key }));
      return 0;
    case 'delete':
      printJson(io, await conn.ok('DELETE', await one(), { key }));
      return 0;
    default:
      throw new UsageError(verb ? `unknown command: operators ${verb}` : 'missing subcommand: operators create|list|disable|enable|set-role|reset-totp|delete');
  }
}

export async function sessionsCommand(args: string[], _flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, id] = args;
  const key = conn.requireAdminKey();
  switch (verb) {
    case 'list':
      printJson(io, await conn.ok('GET', '/v1/admin/sessions', { key }));
      return 0;
    case 'revoke':
      printJson(io, await conn.ok('DELETE', `/v1/admin/sessions/${encodeURIComponent(need(id, 'session id'))}`, { key }));
      return 0;
    default:
      throw new UsageError(verb ? `unknown command: sessions ${verb}` : 'missing subcommand: sessions list|revoke');
  }
}

export async function auditCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  if (args.length > 0) throw new UsageError(`audit takes no arguments (got "${args[0]}")`);
  const q = new URLSearchParams();
  for (const name of ['actor', 'project', 'since', 'until', 'limit', 'cursor'] as const) {
    const v = flags[name];
    if (v !== undefined) q.set(name, v);
  }
  const query = q.size > 0 ? `?${q.toString()}` : '';
  printJson(io, await conn.ok('GET', `/v1/admin/audit${query}`, { key: conn.requireAdminKey() }));
  return 0;
}
