/** `plinth operators …`, `plinth sessions …` and `plinth audit`: named operators over the operator API (`@plinth/client/operator`). */
import type { OperatorClient, OperatorRole } from '@plinth/client/operator';
import { UsageError, printJson, type CliIo, type Connection } from '../client';
import type { Flags } from '../flags';
import { need } from './args';

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
async function operatorId(api: OperatorClient, who: string): Promise<string> {
  if (!who.includes('@')) return who;
  const operators = await api.operators.list();
  const found = operators.find((o) => o.email === who.trim().toLowerCase());
  if (!found) throw new UsageError(`no operator with e-mail ${who}`);
  return found.id;
}

export async function operatorsCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, who, role] = args;
  const api = conn.operator();
  const one = () => operatorId(api, need(who, 'operator id or e-mail'));
  switch (verb) {
    case 'create': {
      if (!flags.email || !flags.role) throw new UsageError('operators create needs --email and --role');
      const password = flags['password-stdin'] ? await firstLineOfStdin(io) : io.env.PLINTH_OPERATOR_PASSWORD;
      if (!password) throw new UsageError('no password: pipe it with --password-stdin or set PLINTH_OPERATOR_PASSWORD');
      // The role is the server's to judge (400 for an unknown one).
      printJson(io, { operator: await api.operators.create({ email: flags.email, role: flags.role as OperatorRole, password }) });
      return 0;
    }
    case 'list':
      printJson(io, { operators: await api.operators.list() });
      return 0;
    case 'disable':
    case 'enable':
      printJson(io, { operator: await api.operators.update(await one(), { status: verb === 'disable' ? 'disabled' : 'active' }) });
      return 0;
    case 'set-role': {
      const id = await one();
      printJson(io, { operator: await api.operators.update(id, { role: need(role, 'role (owner, admin or viewer)') as OperatorRole }) });
      return 0;
    }
    case 'reset-totp':
      printJson(io, { operator: await api.operators.resetTotp(await one()) });
      return 0;
    case 'delete':
      printJson(io, await api.operators.delete(await one()));
      return 0;
    default:
      throw new UsageError(verb ? `unknown command: operators ${verb}` : 'missing subcommand: operators create|list|disable|enable|set-role|reset-totp|delete');
  }
}

export async function sessionsCommand(args: string[], _flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  const [verb, id] = args;
  const api = conn.operator();
  switch (verb) {
    case 'list':
      printJson(io, { sessions: await api.sessions.list() });
      return 0;
    case 'revoke':
      printJson(io, await api.sessions.revoke(need(id, 'session id')));
      return 0;
    default:
      throw new UsageError(verb ? `unknown command: sessions ${verb}` : 'missing subcommand: sessions list|revoke');
  }
}

export async function auditCommand(args: string[], flags: Flags, conn: Connection, io: CliIo): Promise<number> {
  if (args.length > 0) throw new UsageError(`audit takes no arguments (got "${args[0]}")`);
  const api = conn.operator();
  // A --limit that is not a number goes as NaN: the server answers it with its own 400.
  const limit = flags.limit === undefined ? undefined : Number(flags.limit);
  printJson(io, await api.audit({ actor: flags.actor, project: flags.project, since: flags.since, until: flags.until, limit, cursor: flags.cursor }));
  return 0;
}
